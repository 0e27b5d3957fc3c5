import Foundation
import GRDB
public import GeoCore
public import PartitionOffsets
import Synchronization

/// Device state and input progress on disk, in SQLite: the worker's source of truth across restarts.
///
/// One file (`state.sqlite` in the state directory), WAL mode, one writer. A device is one row: its id, its
/// input partition and its whole state in ``DeviceStateEncoding`` (the bytes the changelog topic carries).
/// Each batch is written in one transaction with the next offset of every input partition it covered and the
/// changelog offset reached per partition, so the stored state is never ahead of, nor behind, the stored
/// progress: a process killed at any moment leaves the previous batch or
/// the new one, never a mix. `synchronous=NORMAL`: a power cut may lose the last transactions, never
/// consistency, and the worker then reprocesses those messages into the same events with the same ids.
///
/// Calls block on disk I/O: call them from the worker's own thread, not from Swift's cooperative pool.
public final class StateStore: Sendable {
    /// The database file's name inside the state directory.
    public static let fileName = "state.sqlite"

    private let database: DatabasePool
    /// The directory the store is in.
    private let directory: String
    /// What the restore under way did to the states the store held (counted by SQLite's calls of
    /// `geoworker_restore_keeps_stored`).
    private let restoreTally = RestoreTally()

    /// How many pages (4 KiB each) the write-ahead log takes before the commit that passes them copies it into the
    /// database file: 64 MiB, where SQLite's default is 4 MiB.
    ///
    /// A worker rewrites the same rows checkpoint after checkpoint (every device that moved), and a copy costs the
    /// distinct pages in the log, however often each was written: with SQLite's default a busy worker copied at every
    /// commit (docs/performance.md). The log grows to about 64 MB on disk (more while a long read holds an older
    /// snapshot, which a copy may not overtake); closing the store copies the rest.
    static let logCheckpointPages = 16_384

    /// Opens (creating if needed) the store in `directory`, and brings its schema up to date.
    ///
    /// - Throws: ``StateStoreError`` `open` when the directory or file cannot be used, `migrate` when the
    ///   schema cannot be brought up to date (for example a file written by a newer geoworker).
    public init(directory: String) throws(StateStoreError) {
        self.directory = directory
        var configuration = Configuration()
        configuration.label = "geoworker.state"
        let keepsStored = Self.restoreKeepsStored(counting: restoreTally)
        configuration.prepareDatabase { db in
            db.add(function: keepsStored)
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(Self.logCheckpointPages)")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            database = try DatabasePool(path: directory + "/" + Self.fileName, configuration: configuration)
        } catch {
            throw StateStoreError(.open, error)
        }
        do {
            try StateStoreSchema.migrator.migrate(database)
        } catch {
            throw StateStoreError(.migrate, error)
        }
    }

    // MARK: Reading

    /// The stored devices, by device id: all of them, or those whose input partition is one of `partitions`.
    ///
    /// - Throws: ``StateStoreError`` `read` when SQLite fails or a row does not decode (naming the device).
    public func loadDevices(partitions: Set<Int32>? = nil) throws(StateStoreError) -> [DeviceState] {
        do {
            return try database.read { db in
                var devices: [DeviceState] = []
                let rows = try Row.fetchCursor(
                    db,
                    sql: "SELECT device_id, partition, state FROM device ORDER BY device_id"
                )
                while let row = try rows.next() {
                    if let partitions, !partitions.contains(row[1]) { continue }
                    let decoded = try row.withUnsafeData(atIndex: 2) { data in
                        (data ?? Data()).withUnsafeBytes { bytes in
                            Result { () throws(DeviceStateDecodingError) in try DeviceStateEncoding.decode(bytes) }
                        }
                    }
                    do {
                        devices.append(try decoded.get())
                    } catch {
                        throw StoredDataError("device \(row[0] as String): \(error)")
                    }
                }
                return devices
            }
        } catch let damage as StoredDataError {
            // Found where the rows are decoded anyway, rather than by decoding every row at each start: the next
            // start reads the mark and moves the store aside (``check(directory:decodingDevices:)``).
            try? Data(damage.description.utf8).write(to: URL(fileURLWithPath: Self.damageMark(in: directory)))
            throw StateStoreError(
                code: .read,
                message: "\(damage.description); the store is marked damaged, and the next start moves it aside"
            )
        } catch {
            throw StateStoreError(.read, error)
        }
    }

    /// The next offset to read of every input partition the store has progress for.
    public func loadOffsets() throws(StateStoreError) -> [TopicPartition: Int64] {
        do {
            return try database.read { db in
                var offsets: [TopicPartition: Int64] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT topic, partition, next_offset FROM input_offset") {
                    offsets[TopicPartition(row["topic"], row["partition"])] = row["next_offset"]
                }
                return offsets
            }
        } catch {
            throw StateStoreError(.read, error)
        }
    }

    /// For each changelog partition the store has records from, the next changelog offset it lacks: a restore
    /// reads on from there.
    public func loadChangelogOffsets() throws(StateStoreError) -> [Int32: Int64] {
        do {
            return try database.read { db in
                var offsets: [Int32: Int64] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT partition, next_offset FROM changelog_offset") {
                    offsets[row["partition"]] = row["next_offset"]
                }
                return offsets
            }
        } catch {
            throw StateStoreError(.read, error)
        }
    }

    // MARK: Writing

    /// Writes changed devices, input progress and changelog progress in one transaction: all of it, or (on any
    /// failure) none of it.
    ///
    /// - Parameters:
    ///   - devices: devices whose state changed, encoded, each at most once (they are written in key order);
    ///     each one's row is replaced.
    ///   - offsets: for each input partition the batch covered, the offset of the next message to read.
    ///   - changelogOffsets: for each changelog partition read up to a point, the next offset.
    ///   - removed: ids of devices to forget (a changelog tombstone).
    /// - Throws: ``StateStoreError`` `write`; nothing of it is written then.
    public func commit(
        devices: some Sequence<EncodedDevice>,
        offsets: [TopicPartition: Int64],
        changelogOffsets: [Int32: Int64] = [:],
        removing removed: [String] = []
    ) throws(StateStoreError) {
        try write(devices: devices, offsets: offsets, removing: removed, keepingNewer: false) {
            .reached(changelogOffsets)
        }
    }

    /// Writes devices read from the changelog, and how far it was read, in one transaction, keeping of each device
    /// the newer state: the one whose applied offsets the other's precede (``AppliedOffsets/precedes(_:)``).
    ///
    /// A changelog may hold an older state of a device after a newer one (written late by an instance that had lost
    /// its partitions without knowing), and compaction keeps the last record per key: the store, not the order of
    /// the records, decides which state wins.
    ///
    /// - Parameters:
    ///   - devices: the latest record read of each device, at most one each.
    ///   - changelogOffsets: for each changelog partition read, the next offset.
    ///   - removed: ids of devices to forget (a changelog tombstone).
    /// - Throws: ``StateStoreError`` `write`; nothing of it is written then.
    /// - Returns: what it did to the states the store already held (older ones replaced, newer ones kept).
    @discardableResult
    public func restore(
        devices: some Sequence<EncodedDevice>,
        changelogOffsets: [Int32: Int64],
        removing removed: [String] = []
    ) throws(StateStoreError) -> RestoreOutcome {
        restoreTally.outcome.withLock { $0 = RestoreOutcome() }
        try write(devices: devices, offsets: [:], removing: removed, keepingNewer: true) { .reached(changelogOffsets) }
        return restoreTally.outcome.withLock { $0 }
    }

    /// Writes changed devices and input progress in one transaction once `confirm` says the devices' changelog
    /// records are delivered: all of it, or none of it.
    ///
    /// The devices' rows, the bulk of the work, are written first; then, with the transaction still open,
    /// `confirm` waits for whatever must be durable before the rows may be (the changelog records carrying the
    /// same states) and returns where those records landed, or nil when they were not delivered: the
    /// transaction then rolls back and nothing is written. So a checkpoint's SQLite work overlaps its
    /// changelog's delivery instead of following it.
    ///
    /// A changelog partition's stored offset moves to the end of what landed there only when the records landed
    /// right after it with nothing between them (``OffsetSpan/isContiguous``): records another instance wrote in
    /// between (while this one had lost the partition without knowing) stay unread by this store, and the next
    /// restore of the partition reads them.
    ///
    /// - Parameters:
    ///   - devices: devices whose state changed, encoded, each at most once (they are written in key order);
    ///     each one's row is replaced.
    ///   - offsets: for each input partition the batch covered, the offset of the next message to read.
    ///   - removed: ids of devices to forget (a changelog tombstone).
    ///   - confirm: called once, inside the transaction, after the device rows are written: where the devices'
    ///     changelog records landed, per changelog partition, or nil to write nothing.
    /// - Returns: whether the transaction was committed (false: `confirm` returned nil).
    /// - Throws: ``StateStoreError`` `write`; nothing of it is written then.
    @discardableResult
    public func commit(
        devices: some Sequence<EncodedDevice>,
        offsets: [TopicPartition: Int64],
        removing removed: [String] = [],
        confirmingWith confirm: () -> [Int32: OffsetSpan]?
    ) throws(StateStoreError) -> Bool {
        try write(devices: devices, offsets: offsets, removing: removed, keepingNewer: false) {
            confirm().map(ChangelogProgress.appended)
        }
    }

    /// How far a transaction takes the store's copy of the changelog.
    private enum ChangelogProgress {
        /// Read up to these offsets (a restore): stored as they are.
        case reached([Int32: Int64])
        /// This store's own records landed in these spans: each stored only where it follows the stored offset.
        case appended([Int32: OffsetSpan])
    }

    @discardableResult
    private func write(
        devices: some Sequence<EncodedDevice>,
        offsets: [TopicPartition: Int64],
        removing removed: [String],
        keepingNewer: Bool,
        confirmingWith confirm: () -> ChangelogProgress?
    ) throws(StateStoreError) -> Bool {
        // In key order: a WITHOUT ROWID table keeps each row in its key's B-tree page, and visiting the pages in
        // order rather than at random (the order devices changed in) touches each page once. Swift orders ASCII ids
        // as SQLite does, byte by byte; others a little differently, which only costs some of the gain.
        var ordered = Array(devices)  // a concrete array: sorting the generic sequence is far slower
        ordered.sort { $0.deviceId < $1.deviceId }
        do {
            var committed = false
            try database.writeWithoutTransaction { db in
                try db.inTransaction {
                    var upsertDevice = BoundStatement(
                        try db.cachedStatement(sql: keepingNewer ? Self.upsertNewerDeviceSQL : Self.upsertDeviceSQL)
                    )
                    for device in ordered {
                        upsertDevice.bind(device.deviceId)
                        upsertDevice.bind(Int64(device.partition))
                        upsertDevice.bind(device.bytes)
                        try upsertDevice.execute()
                    }
                    var deleteDevice = BoundStatement(
                        try db.cachedStatement(sql: "DELETE FROM device WHERE device_id = ?")
                    )
                    for deviceId in removed {
                        deleteDevice.bind(deviceId)
                        try deleteDevice.execute()
                    }
                    guard let progress = confirm() else { return .rollback }
                    var upsertOffset = BoundStatement(try db.cachedStatement(sql: Self.upsertOffsetSQL))
                    for (key, offset) in offsets.sorted(by: { $0.key < $1.key }) {
                        upsertOffset.bind(key.topic)
                        upsertOffset.bind(Int64(key.partition))
                        upsertOffset.bind(offset)
                        try upsertOffset.execute()
                    }
                    var upsertChangelog = BoundStatement(
                        try db.cachedStatement(sql: Self.upsertChangelogOffsetSQL)
                    )
                    for (partition, offset) in try Self.changelogOffsets(progress, db).sorted(by: { $0.key < $1.key }) {
                        upsertChangelog.bind(Int64(partition))
                        upsertChangelog.bind(offset)
                        try upsertChangelog.execute()
                    }
                    committed = true
                    return .commit
                }
            }
            return committed
        } catch {
            throw StateStoreError(.write, error)
        }
    }

    /// `geoworker_restore_keeps_stored(incoming, stored)`: whether the state `incoming` encodes is older than
    /// `stored`'s.
    ///
    /// Its applied offsets precede the other's, read from the encodings' heads; a restore's upsert keeps the stored row
    /// then. Each call is counted in `tally`: a stored state older than the record (replaced), or newer (kept).
    ///
    /// Called by SQLite only for a device already stored. A head that does not decode is not older: the record the
    /// restore checked wins over a stored row that no longer decodes.
    private static func restoreKeepsStored(counting tally: RestoreTally) -> DatabaseFunction {
        DatabaseFunction("geoworker_restore_keeps_stored", argumentCount: 2, pure: false) { values in
            guard let incoming = Data.fromDatabaseValue(values[0]), let stored = Data.fromDatabaseValue(values[1]),
                let incomingOffsets = try? incoming.withUnsafeBytes({ try DeviceStateEncoding.appliedOffsets(in: $0) }),
                let storedOffsets = try? stored.withUnsafeBytes({ try DeviceStateEncoding.appliedOffsets(in: $0) })
            else { return false }
            if incomingOffsets.precedes(storedOffsets) {
                tally.outcome.withLock { $0.keptNewer += 1 }
                return true
            }
            if storedOffsets.precedes(incomingOffsets) { tally.outcome.withLock { $0.replaced += 1 } }
            return false
        }
    }

    /// The changelog offsets to store for `progress`: a restore's as they are; of a checkpoint's own records, the
    /// end of each span that follows the stored offset with nothing between (a partition with no stored offset
    /// counts from 0).
    private static func changelogOffsets(_ progress: ChangelogProgress, _ db: Database) throws -> [Int32: Int64] {
        switch progress {
        case .reached(let offsets):
            return offsets
        case .appended(let spans):
            var offsets: [Int32: Int64] = [:]
            for (partition, span) in spans where span.isContiguous {
                let stored =
                    try Int64.fetchOne(
                        db,
                        sql: "SELECT next_offset FROM changelog_offset WHERE partition = ?",
                        arguments: [Int64(partition)]
                    ) ?? 0
                if span.first == stored { offsets[partition] = span.next }
            }
            return offsets
        }
    }

    /// Writes changed devices (encoding each) and input progress in one transaction; see
    /// ``commit(devices:offsets:changelogOffsets:removing:)``.
    public func commit(states: some Sequence<DeviceState>, offsets: [TopicPartition: Int64]) throws(StateStoreError) {
        try commit(devices: states.map(EncodedDevice.init), offsets: offsets)
    }

    private static let upsertDeviceSQL = """
        INSERT INTO device (device_id, partition, state) VALUES (?, ?, ?)
        ON CONFLICT (device_id) DO UPDATE SET partition = excluded.partition, state = excluded.state
        """

    /// The upsert of a restore: a stored state newer than the record's stays.
    private static let upsertNewerDeviceSQL = """
        INSERT INTO device (device_id, partition, state) VALUES (?, ?, ?)
        ON CONFLICT (device_id) DO UPDATE SET partition = excluded.partition, state = excluded.state
        WHERE NOT geoworker_restore_keeps_stored(excluded.state, device.state)
        """

    private static let upsertOffsetSQL = """
        INSERT INTO input_offset (topic, partition, next_offset) VALUES (?, ?, ?)
        ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset
        """

    private static let upsertChangelogOffsetSQL = """
        INSERT INTO changelog_offset (partition, next_offset) VALUES (?, ?)
        ON CONFLICT (partition) DO UPDATE SET next_offset = excluded.next_offset
        """
}

/// A row that no version of geoworker would have written (edited by hand, or corrupt).
struct StoredDataError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// What a changelog restore did to the device states the store already held.
public struct RestoreOutcome: Hashable, Sendable {
    /// Stored states older than the record read (their applied offsets precede its): replaced by it.
    ///
    /// A store that was behind its own changelog (a crash before the store was written), or an instance back with a state from before
    /// another instance applied the partition's input.
    public var replaced = 0
    /// Stored states newer than the record read (a record written late, by an instance that had lost the partition
    /// without knowing): kept.
    public var keptNewer = 0

    public init(replaced: Int = 0, keptNewer: Int = 0) {
        self.replaced = replaced
        self.keptNewer = keptNewer
    }
}

/// The counts of the restore under way, written by SQLite's calls of the restore's upsert function.
private final class RestoreTally: Sendable {
    let outcome = Mutex(RestoreOutcome())
}
