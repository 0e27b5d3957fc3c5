import Foundation
import GRDB
import GeoCore

/// The store's schema and its history: each version is a migration, never edited once released, so that a
/// state directory written by any earlier geoworker opens with nothing lost.
enum StateStoreSchema {
    static var migrator: DatabaseMigrator {
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
        // moved, and with the index each of those writes also replaced an index entry (a second B-tree write);
        // nothing reads devices by partition yet, and whatever will (restoring a partition's devices) can
        // scan or bring it back.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: "DROP INDEX device_by_partition")
        }
        // Version 3: the pins' announced states move into the device row, one byte each in tracking order
        // (the order of `pin.position`). A position that moves a device in or out of a pin then rewrites
        // one row instead of deleting and inserting every pin of the device.
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
        // Version 4: a device's whole state is one blob in `DeviceStateEncoding`, the form the changelog topic
        // carries, so restoring a partition from the changelog stores the bytes as they come; the pin table
        // goes (its definitions are in the blob). The changelog offset reached per partition is kept beside
        // the input offsets, written in the same transactions.
        migrator.registerMigration("v4") { db in
            try db.execute(
                sql: "CREATE TABLE device_v4 (device_id TEXT PRIMARY KEY NOT NULL, "
                    + "partition INTEGER NOT NULL, state BLOB NOT NULL) WITHOUT ROWID"
            )
            let insert = try db.makeStatement(
                sql: "INSERT INTO device_v4 (device_id, partition, state) VALUES (?, ?, ?)"
            )
            for var device in try V3Rows.loadDevices(db) {
                // v3 kept no applied offsets: none are known, so nothing is skipped on the first replay.
                device.appliedOffsets = AppliedOffsets()
                try insert.execute(
                    arguments: [device.deviceId, device.inputPartition, Data(DeviceStateEncoding.encode(device))]
                )
            }
            try db.execute(
                sql: """
                    DROP TABLE device;
                    DROP TABLE pin;
                    ALTER TABLE device_v4 RENAME TO device;
                    CREATE TABLE changelog_offset (
                        partition INTEGER PRIMARY KEY NOT NULL,  -- changelog partition (= input partition number)
                        next_offset INTEGER NOT NULL             -- the next changelog offset this store lacks
                    ) WITHOUT ROWID;
                    """
            )
        }
        return migrator
    }
}

/// Reads devices as schema v3 kept them (a row of columns per device, its pins in the pin table, their
/// announced states in the row's `memberships`): for the v4 migration only.
enum V3Rows {
    static func loadDevices(_ db: Database) throws -> [DeviceState] {
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
