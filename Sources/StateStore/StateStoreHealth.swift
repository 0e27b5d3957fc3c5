public import Foundation
import GRDB
import GeoCore

/// Whether a state directory's store can be trusted, found without changing it: SQLite opens it read-only, its own
/// check (`PRAGMA quick_check`) passes, no device was found undecodable when loaded, and (when asked) every device row
/// decodes.
///
/// A disk that returned garbage, a file cut short, a write-ahead log lost beside a half-copied database: each is
/// found here before a worker reads a device from it (``StateStore/check(directory:)``), and a damaged file is
/// moved aside, never deleted (``StateStore/moveAside(directory:at:)``).
public enum StateStoreHealth: Sendable, Equatable {
    /// There is no store in the directory yet.
    case missing
    /// The store opens, passes SQLite's check, and every device decodes.
    case healthy(Summary)
    /// The store cannot be trusted: what was found, in words.
    case damaged(String)

    /// What a healthy store holds.
    public struct Summary: Sendable, Equatable {
        /// Devices stored.
        public var devices: Int
        /// Input partitions with a stored next offset.
        public var inputPartitions: Int
        /// Changelog partitions with a stored next offset.
        public var changelogPartitions: Int
    }
}

extension StateStore {
    /// The store's file in `directory`, the files SQLite keeps beside it (its write-ahead log and shared memory), and
    /// the mark of a store found damaged.
    public static func files(in directory: String) -> [String] {
        let file = directory + "/" + fileName
        return [file, file + "-wal", file + "-shm", damageMark(in: directory)]
    }

    /// The file that marks the store in `directory` damaged: a device row that did not decode when it was loaded
    /// (``loadDevices(partitions:)``), what was found in it.
    static func damageMark(in directory: String) -> String { directory + "/" + fileName + "-damaged" }

    /// Checks the store in `directory` without writing to it.
    ///
    /// Call it while no worker runs on the directory (the worker does, under the directory's lock, before it opens the
    /// store); a check beside a running worker sees its last committed state.
    ///
    /// - Parameters:
    ///   - directory: the state directory.
    ///   - decodingDevices: whether to decode every device too (as long as loading them: what `geoworker state
    ///     check` does); without, a device that does not decode is found, and marked, when it is loaded.
    /// - Returns: missing, healthy with what the store holds, or damaged with what was found.
    public static func check(directory: String, decodingDevices: Bool = true) -> StateStoreHealth {
        let path = directory + "/" + fileName
        guard FileManager.default.fileExists(atPath: path) else { return .missing }
        if let mark = FileManager.default.contents(atPath: damageMark(in: directory)) {
            return .damaged("marked damaged when loaded: " + String(decoding: mark, as: UTF8.self))
        }
        // SQLite deletes both when the last connection closes, and a crash leaves both: an index without its log is a
        // log lost after a crash, and the transactions it held with it (the database file alone may be half-copied).
        if FileManager.default.fileExists(atPath: path + "-shm"), !FileManager.default.fileExists(atPath: path + "-wal")
        {
            return .damaged(
                "its write-ahead log \(fileName)-wal is missing beside its index \(fileName)-shm: the last transactions are lost"
            )
        }
        var configuration = Configuration()
        configuration.readonly = true
        configuration.label = "geoworker.state.check"
        do {
            let database = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? database.close() }
            return try database.read { db in
                let problems = try String.fetchAll(db, sql: "PRAGMA quick_check")
                guard problems == ["ok"] else {
                    return .damaged("SQLite's check found: " + problems.prefix(3).joined(separator: "; "))
                }
                guard try db.tableExists("device"), try db.tableExists("input_offset"),
                    try db.tableExists("changelog_offset")
                else {
                    return .damaged("it is not a geoworker state store of a version this geoworker reads")
                }
                let devices = try Int.fetchOne(db, sql: "SELECT count(*) FROM device") ?? 0
                let rows = try Row.fetchCursor(db, sql: "SELECT device_id, state FROM device")
                while decodingDevices, let row = try rows.next() {
                    let decoded = try row.withUnsafeData(atIndex: 1) { data in
                        (data ?? Data()).withUnsafeBytes { bytes in
                            Result { () throws(DeviceStateDecodingError) in try DeviceStateEncoding.decode(bytes) }
                        }
                    }
                    if case .failure(let error) = decoded {
                        return .damaged("device \(row[0] as String) does not decode: \(error)")
                    }
                }
                return .healthy(
                    .init(
                        devices: devices,
                        inputPartitions: try Int.fetchOne(db, sql: "SELECT count(*) FROM input_offset") ?? 0,
                        changelogPartitions: try Int.fetchOne(db, sql: "SELECT count(*) FROM changelog_offset") ?? 0
                    )
                )
            }
        } catch {
            return .damaged("\(StateStoreError(.open, error).message)")
        }
    }

    /// Moves the store's files in `directory` aside, each renamed with `date` (`state.sqlite.damaged-<UTC time>`),
    /// so that a new store starts there and the old one stays for inspection.
    ///
    /// - Returns: the new paths of the files moved.
    /// - Throws: ``StateStoreError`` `open` when a file cannot be renamed.
    public static func moveAside(directory: String, at date: Date) throws(StateStoreError) -> [String] {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withYear, .withMonth, .withDay, .withTime, .withTimeZone]
        let suffix = ".damaged-" + formatter.string(from: date).replacingOccurrences(of: ":", with: "")
        var moved: [String] = []
        for file in files(in: directory) where FileManager.default.fileExists(atPath: file) {
            do {
                try FileManager.default.moveItem(atPath: file, toPath: file + suffix)
            } catch {
                throw StateStoreError(code: .open, message: "cannot move \(file) aside: \(error)")
            }
            moved.append(file + suffix)
        }
        return moved
    }
}
