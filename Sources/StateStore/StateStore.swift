import Foundation
import GRDB
public import GeoCore
public import Kafka

/// Device state and input progress on disk, in SQLite: the worker's source of truth across restarts.
///
/// One file (`state.sqlite` in the state directory), WAL mode, one writer. Each batch is written in one
/// transaction with the next offset of every input partition it covered, so the stored state is never
/// ahead of, nor behind, the stored progress: a process killed at any moment leaves the previous batch or
/// the new one, never a mix. `synchronous=NORMAL`: a power cut may lose the last transactions, never
/// consistency, and the worker then reprocesses those messages into the same events with the same ids.
///
/// Calls block on disk I/O: call them from the worker's own thread, not from Swift's cooperative pool.
public final class StateStore: Sendable {
    /// The database file's name inside the state directory.
    public static let fileName = "state.sqlite"

    private let database: DatabasePool

    /// Opens (creating if needed) the store in `directory`, and brings its schema up to date.
    ///
    /// - Throws: ``StateStoreError`` `open` when the directory or file cannot be used, `migrate` when the
    ///   schema cannot be brought up to date (for example a file written by a newer geoworker).
    public init(directory: String) throws(StateStoreError) {
        var configuration = Configuration()
        configuration.label = "geoworker.state"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            database = try DatabasePool(path: directory + "/" + Self.fileName, configuration: configuration)
        } catch {
            throw StateStoreError(.open, error)
        }
        do {
            try Self.migrator.migrate(database)
        } catch {
            throw StateStoreError(.migrate, error)
        }
    }

    // MARK: Reading

    /// Every stored device with its pins (in the order they were tracked), by device id.
    public func loadDevices() throws(StateStoreError) -> [DeviceState] {
        do {
            return try database.read { db in
                var devices: [DeviceState] = []
                var memberships: [[UInt8]] = []
                var slots: [String: Int] = [:]
                let rows = try Row.fetchCursor(db, sql: "SELECT * FROM device ORDER BY device_id")
                while let row = try rows.next() {
                    let state = try Self.deviceState(from: row)
                    slots[state.deviceId] = devices.count
                    devices.append(state)
                    memberships.append(Array((row["memberships"] as Data?) ?? Data()))
                }
                let pins = try Row.fetchCursor(db, sql: "SELECT * FROM pin ORDER BY device_id, position")
                while let row = try pins.next() {
                    let deviceId: String = row["device_id"]
                    if let slot = slots[deviceId] { devices[slot].pins.append(try Self.pin(from: row)) }
                }
                for slot in devices.indices { try Self.applyMemberships(memberships[slot], to: &devices[slot]) }
                return devices
            }
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

    // MARK: Writing

    /// Writes the changed devices and the input progress of one batch in one transaction: all of it, or
    /// (on any failure) none of it.
    ///
    /// - Parameters:
    ///   - devices: devices whose state changed. Each one's row is rewritten, with its pins' announced
    ///     states; the pins themselves only when `pinSetChanged` (positions never change them).
    ///   - offsets: for each input partition the batch covered, the offset of the next message to read.
    public func commit(
        devices: some Sequence<DeviceRegistry.ChangedDevice>,
        offsets: [TopicPartition: Int64]
    ) throws(StateStoreError) {
        // In key order: a WITHOUT ROWID table keeps each row in its key's B-tree page, and visiting the pages
        // in order rather than at random (the order devices changed in) makes a checkpoint of 100k devices
        // 1.7 times as fast, 2.2 times with their pins (geocore-bench: 282 -> 170 ms, 1.2 -> 0.54 s, the sort's
        // 30 ms included). Swift orders ASCII ids as SQLite does, byte by byte; others a little differently,
        // which only costs some of the gain.
        var ordered = Array(devices)  // a concrete array: sorting the generic sequence was ten times slower
        ordered.sort { $0.state.deviceId < $1.state.deviceId }
        do {
            try database.write { db in
                var upsertDevice = BoundStatement(try db.cachedStatement(sql: Self.upsertDeviceSQL))
                var deletePins = BoundStatement(try db.cachedStatement(sql: "DELETE FROM pin WHERE device_id = ?"))
                var insertPin = BoundStatement(try db.cachedStatement(sql: Self.insertPinSQL))
                for change in ordered {
                    let state = change.state
                    let fix = state.lastFix
                    upsertDevice.bind(state.deviceId)
                    upsertDevice.bind(state.inputPartition)
                    upsertDevice.bind(fix?.coordinate.latitude)
                    upsertDevice.bind(fix?.coordinate.longitude)
                    upsertDevice.bind(fix?.timestamp)
                    upsertDevice.bind(fix?.accuracy)
                    upsertDevice.bind(state.languages.joined(separator: ","))
                    upsertDevice.bind(state.country)
                    upsertDevice.bind(state.countryCandidate)
                    upsertDevice.bind(state.countryCandidateFixes)
                    upsertDevice.bind(Self.memberships(of: state))
                    try upsertDevice.execute()
                    guard change.pinSetChanged else { continue }
                    deletePins.bind(state.deviceId)
                    try deletePins.execute()
                    for (position, tracked) in state.pins.enumerated() {
                        let pin = tracked.pin
                        insertPin.bind(state.deviceId)
                        insertPin.bind(pin.id)
                        insertPin.bind(position)
                        insertPin.bind(pin.center.latitude)
                        insertPin.bind(pin.center.longitude)
                        insertPin.bind(pin.radius)
                        insertPin.bind(pin.title)
                        insertPin.bind(pin.metadataJSON)
                        try insertPin.execute()
                    }
                }
                var upsertOffset = BoundStatement(try db.cachedStatement(sql: Self.upsertOffsetSQL))
                for (key, offset) in offsets.sorted(by: { $0.key < $1.key }) {
                    upsertOffset.bind(key.topic)
                    upsertOffset.bind(key.partition)
                    upsertOffset.bind(offset)
                    try upsertOffset.execute()
                }
            }
        } catch {
            throw StateStoreError(.write, error)
        }
    }

    // MARK: Schema

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        // Version 1. Later versions are new `registerMigration` calls, never edits of this one.
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE device (
                        device_id TEXT PRIMARY KEY NOT NULL,
                        partition INTEGER NOT NULL,          -- input partition: lets a worker load only its own
                        last_lat REAL, last_lon REAL, last_timestamp INTEGER, last_accuracy REAL,
                        languages TEXT NOT NULL,             -- BCP 47 tags joined by commas
                        country TEXT,
                        country_candidate TEXT,
                        country_candidate_fixes INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX device_by_partition ON device(partition);
                    CREATE TABLE pin (
                        device_id TEXT NOT NULL,
                        pin_id TEXT NOT NULL,
                        position INTEGER NOT NULL,           -- order of tracking, which orders events
                        lat REAL NOT NULL, lon REAL NOT NULL, radius REAL NOT NULL,
                        title TEXT,
                        metadata TEXT,                       -- JSON object text, as the command carried it
                        membership INTEGER NOT NULL,         -- 0 undetermined, 1 inside, 2 outside
                        PRIMARY KEY (device_id, pin_id)
                    ) WITHOUT ROWID;
                    CREATE TABLE input_offset (
                        topic TEXT NOT NULL,
                        partition INTEGER NOT NULL,
                        next_offset INTEGER NOT NULL,
                        PRIMARY KEY (topic, partition)
                    ) WITHOUT ROWID;
                    """
            )
        }
        // Version 2: no index on device(partition). Every checkpoint rewrites the row of each device that
        // moved, and with the index each of those writes also replaced an index entry (a third of the cost);
        // nothing reads devices by partition yet, and whatever will (restoring a partition's devices) can
        // scan or bring it back.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "DROP INDEX device_by_partition")
        }
        // Version 3: the pins' announced states move into the device row, one byte each in tracking order
        // (the order of `pin.position`). A position that moves a device in or out of a pin then rewrites
        // one row instead of deleting and inserting every pin of the device: geocore-bench's checkpoint
        // of 100k devices that crossed pins went from 0.53 s to 0.16 s.
        migrator.registerMigration("v3") { db in
            try db.execute(sql: "ALTER TABLE device ADD COLUMN memberships BLOB NOT NULL DEFAULT x''")
            var memberships: [String: [UInt8]] = [:]
            let pins = try Row.fetchCursor(
                db,
                sql: "SELECT device_id, membership FROM pin ORDER BY device_id, position"
            )
            while let row = try pins.next() {
                memberships[row["device_id"], default: []].append(UInt8(clamping: row["membership"] as Int))
            }
            let update = try db.makeStatement(sql: "UPDATE device SET memberships = ? WHERE device_id = ?")
            for (deviceId, states) in memberships {
                try update.execute(arguments: [Data(states), deviceId])
            }
            try db.execute(sql: "ALTER TABLE pin DROP COLUMN membership")
        }
        return migrator
    }

    private static let upsertDeviceSQL = """
        INSERT INTO device (device_id, partition, last_lat, last_lon, last_timestamp, last_accuracy, languages,
                            country, country_candidate, country_candidate_fixes, memberships)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (device_id) DO UPDATE SET
            partition = excluded.partition, last_lat = excluded.last_lat, last_lon = excluded.last_lon,
            last_timestamp = excluded.last_timestamp, last_accuracy = excluded.last_accuracy,
            languages = excluded.languages, country = excluded.country,
            country_candidate = excluded.country_candidate,
            country_candidate_fixes = excluded.country_candidate_fixes, memberships = excluded.memberships
        """

    private static let insertPinSQL = """
        INSERT INTO pin (device_id, pin_id, position, lat, lon, radius, title, metadata)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """

    private static let upsertOffsetSQL = """
        INSERT INTO input_offset (topic, partition, next_offset) VALUES (?, ?, ?)
        ON CONFLICT (topic, partition) DO UPDATE SET next_offset = excluded.next_offset
        """

    // MARK: Rows

    private static func deviceState(from row: Row) throws -> DeviceState {
        let deviceId: String = row["device_id"]
        var fix: Fix?
        if let latitude: Double = row["last_lat"], let longitude: Double = row["last_lon"],
            let timestamp: Int64 = row["last_timestamp"]
        {
            guard let coordinate = Coordinate(latitude: latitude, longitude: longitude) else {
                throw StoredDataError("device \(deviceId) has an invalid last position")
            }
            fix = Fix(coordinate: coordinate, timestamp: timestamp, accuracy: row["last_accuracy"])
        }
        let languages: String = row["languages"]
        return DeviceState(
            deviceId: deviceId,
            lastFix: fix,
            languages: languages.isEmpty ? [] : languages.split(separator: ",").map(String.init),
            country: row["country"],
            countryCandidate: row["country_candidate"],
            countryCandidateFixes: row["country_candidate_fixes"],
            inputPartition: row["partition"]
        )
    }

    /// The announced state of each pin, one byte each in tracking order: the device row's `memberships`.
    private static func memberships(of state: DeviceState) -> [UInt8] {
        state.pins.map(\.membership.rawValue)
    }

    /// Sets the announced states read from the device row on the pins read from the pin table.
    ///
    /// The two agree unless one device's messages reached two apply threads (the worker splits devices among
    /// them by message key, so messages of one device with different keys), whose checkpoints can then leave
    /// one's row beside the other's pins. That must not stop a
    /// restart: a pin without a stored state is undetermined (its next deciding fix announces it), extra states
    /// are dropped. A byte no version wrote is invalid data.
    private static func applyMemberships(_ stored: [UInt8], to state: inout DeviceState) throws {
        for (index, byte) in stored.prefix(state.pins.count).enumerated() {
            guard let membership = Membership(rawValue: byte) else {
                throw StoredDataError("device \(state.deviceId) has an invalid announced state \(byte)")
            }
            state.pins[index].membership = membership
        }
    }

    private static func pin(from row: Row) throws -> TrackedPin {
        let pinId: String = row["pin_id"]
        guard let center = Coordinate(latitude: row["lat"], longitude: row["lon"]),
            let pin = Pin(
                id: pinId,
                center: center,
                radius: row["radius"],
                title: row["title"],
                metadataJSON: row["metadata"]
            )
        else { throw StoredDataError("pin \(pinId) of device \(row["device_id"] as String) is invalid") }
        return TrackedPin(pin: pin)
    }
}

/// A row that no version of geoworker would have written (edited by hand, or corrupt).
struct StoredDataError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
