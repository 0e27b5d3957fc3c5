import Foundation
import GeoCore
import PartitionOffsets
import StateStore
import Testing

/// A fresh directory under the system's temporary directory.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "geoworker-test-" + UUID().uuidString
    return path
}

@Suite("State store", .timeLimit(.minutes(5)))
struct StateStoreTests {
    /// A device with everything a row holds: pins in tracking order (not name order) in all three announced states, a
    /// title and metadata to escape, a pending country candidate.
    ///
    /// The v2 fixture file holds it too.
    static func truck() throws -> DeviceState {
        let center = try #require(Coordinate(latitude: 50.85, longitude: 4.35))
        return DeviceState(
            deviceId: "truck-17",
            pins: [
                TrackedPin(
                    pin: try #require(
                        Pin(
                            id: "z-last-by-name",
                            center: center,
                            radius: 200,
                            title: "Exit \"23\"",
                            metadataJSON: #"{"road":"E40"}"#
                        )
                    ),
                    membership: .inside
                ),
                TrackedPin(
                    pin: try #require(Pin(id: "a-first-by-name", center: center, radius: 50)),
                    membership: .outside
                ),
                TrackedPin(pin: try #require(Pin(id: "m", center: center, radius: 1)), membership: .undetermined),
            ],
            lastFix: Fix(coordinate: center, timestamp: 1_795_000_000_123, accuracy: 12.5),
            languages: ["fr-BE", "en"],
            country: "BE",
            countryCandidate: "NL",
            countryCandidateFixes: 1,
            inputPartition: 3
        )
    }

    @Test(
        "devices, pins (in order, with their announced states), partitions, input and changelog offsets survive reopening"
    )
    func roundTrip() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var full = try Self.truck()
        full.appliedOffsets = AppliedOffsets(positions: 1041, commands: 6)
        let bare = DeviceState(deviceId: "tr\u{fc}ck-\u{1F600}", inputPartition: 3)
        let elsewhere = DeviceState(deviceId: "a-elsewhere", inputPartition: 1)
        let offsets: [TopicPartition: Int64] = [
            TopicPartition("positions", 3): 1042, TopicPartition("commands", 3): 7,
        ]

        let store = try StateStore(directory: directory)
        try store.commit(
            devices: [full, bare, elsewhere].map(EncodedDevice.init),
            offsets: offsets,
            changelogOffsets: [3: 12, 1: 4]
        )
        let reopened = try StateStore(directory: directory)
        #expect(try reopened.loadDevices() == [elsewhere, full, bare])
        #expect(try reopened.loadDevices(partitions: [3]) == [full, bare])
        #expect(try reopened.loadDevices(partitions: [2]) == [])
        #expect(try reopened.loadOffsets() == offsets)
        #expect(try reopened.loadChangelogOffsets() == [3: 12, 1: 4])
        try reopened.commit(devices: [], offsets: [:], changelogOffsets: [3: 20])
        #expect(try reopened.loadChangelogOffsets() == [3: 20, 1: 4])
    }

    @Test("a later batch replaces what an earlier one wrote, pins and partition included")
    func laterBatchesReplace() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let center = try #require(Coordinate(latitude: 1, longitude: 2))
        let pin = TrackedPin(pin: try #require(Pin(id: "p", center: center, radius: 10)), membership: .inside)
        var state = DeviceState(
            deviceId: "d",
            pins: [pin],
            lastFix: Fix(coordinate: center, timestamp: 1, accuracy: nil)
        )
        try store.commit(states: [state], offsets: [TopicPartition("t", 0): 10])

        state.lastFix = Fix(coordinate: center, timestamp: 2, accuracy: 3)
        state.pins = []
        state.inputPartition = 4
        try store.commit(states: [state], offsets: [TopicPartition("t", 0): 20])
        #expect(try store.loadDevices() == [state])
        #expect(try store.loadDevices(partitions: [0]) == [])
        #expect(try store.loadOffsets() == [TopicPartition("t", 0): 20])
    }

    @Test("a commit waits for its confirmation with its rows written but unseen, and one refused writes nothing")
    func confirmedCommit() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let reader = try StateStore(directory: directory)
        let before = DeviceState(deviceId: "a", country: "FR", inputPartition: 3)
        try store.commit(devices: [EncodedDevice(before)], offsets: [TopicPartition("positions", 3): 10])
        let after = [
            DeviceState(deviceId: "a", country: "DE", inputPartition: 3),
            DeviceState(deviceId: "b", country: "NL", inputPartition: 3),
        ]

        var confirmations = 0
        let refused = try store.commit(
            devices: after.map(EncodedDevice.init),
            offsets: [TopicPartition("positions", 3): 20]
        ) {
            confirmations += 1
            return nil
        }
        #expect(!refused)
        #expect(confirmations == 1)
        #expect(try store.loadDevices() == [before])
        #expect(try store.loadOffsets() == [TopicPartition("positions", 3): 10])
        #expect(try store.loadChangelogOffsets().isEmpty)

        var seenWhileWaiting: [DeviceState]?
        let confirmed = try store.commit(
            devices: after.map(EncodedDevice.init),
            offsets: [TopicPartition("positions", 3): 20]
        ) {
            // Another connection, as another process would be, still sees the state before this commit.
            seenWhileWaiting = try? reader.loadDevices()
            return [3: OffsetSpan(first: 0, next: 9, count: 9)]
        }
        #expect(confirmed)
        #expect(seenWhileWaiting == [before])
        #expect(try reader.loadDevices() == after)
        #expect(try reader.loadOffsets() == [TopicPartition("positions", 3): 20])
        #expect(try reader.loadChangelogOffsets() == [3: 9])
    }

    @Test("a device row that does not decode stops loading with an error naming the device")
    func undecodableRow() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        var bytes = DeviceStateEncoding.encode(DeviceState(deviceId: "d"))
        bytes[0] = 99
        try store.commit(devices: [EncodedDevice(deviceId: "d", partition: 0, bytes: bytes)], offsets: [:])
        let error = #expect(throws: StateStoreError.self) { try store.loadDevices() }
        #expect(error?.code == .read)
        #expect(error?.description.contains("device d: encoding version 99") == true, "\(String(describing: error))")
        // Found when loaded, it marks the store: the next start's quick check sees it without decoding every device.
        let health = StateStore.check(directory: directory, decodingDevices: false)
        let finding = try #require(health.damage, "the store is marked damaged, not \(health)")
        #expect(finding.contains("device d: encoding version 99"))
        _ = try StateStore.moveAside(directory: directory, at: Date(timeIntervalSince1970: 0))
        #expect(StateStore.check(directory: directory) == .missing, "the mark goes aside with the store")
    }

    @Test("a store written by schema v2 (pins' states in the pin rows) opens through v3 and v4 with nothing lost")
    func migratesVersion2() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Written by geoworker at schema v2 (commit 0719811) from the states below.
        let fixture = try #require(Bundle.module.url(forResource: "Fixtures/state-v2", withExtension: "sqlite"))
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fixture.path, toPath: directory + "/" + StateStore.fileName)

        let truck = try Self.truck()
        let center = try #require(Coordinate(latitude: 50.85, longitude: 4.35))
        var van = DeviceState(
            deviceId: "van-2",
            pins: [TrackedPin(pin: try #require(Pin(id: "depot", center: center, radius: 300)), membership: .inside)],
            lastFix: Fix(coordinate: center, timestamp: 1_795_000_000_456, accuracy: nil),
            languages: ["nl-BE"],
            country: "BE",
            inputPartition: 1
        )
        let bare = DeviceState(deviceId: "tr\u{fc}ck-\u{1F600}", inputPartition: 3)

        let store = try StateStore(directory: directory)
        #expect(try store.loadDevices().map(\.inputPartition) == [3, 3, 1])
        #expect(try store.loadDevices() == [truck, bare, van])
        #expect(
            try store.loadOffsets() == [
                TopicPartition("positions", 3): 1042, TopicPartition("commands", 3): 7,
                TopicPartition("positions", 1): 99, TopicPartition("commands", 1): 2,
            ]
        )
        #expect(try store.loadDevices().map(\.pins.count) == [3, 0, 1])

        // And the migrated store takes new batches.
        van.pins[0].membership = .outside
        try store.commit(states: [van], offsets: [:])
        #expect(try StateStore(directory: directory).loadDevices() == [truck, bare, van])
    }

    @Test("a checkpoint's rows stay in the write-ahead log, not copied at each commit, until the store closes")
    func writeAheadLogCopiedLate() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/" + StateStore.fileName
        func size(_ path: String) throws -> Int {
            try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        }
        let truck = try Self.truck()
        // 20k devices of some 300 bytes: over SQLite's default of 1000 log pages, under the store's own limit.
        let devices = (0..<20_000).map { number in
            EncodedDevice(
                DeviceState(
                    deviceId: "device-\(number)",
                    pins: truck.pins,
                    lastFix: truck.lastFix,
                    inputPartition: Int32(number % 8)
                )
            )
        }
        do {
            let store = try StateStore(directory: directory)
            try store.commit(devices: devices, offsets: [TopicPartition("positions", 0): 20_000])
            #expect(try size(path + "-wal") > 4 << 20, "the rows are in the log")
            #expect(try size(path) < 1 << 20, "the commit did not copy the log into the database file")
            #expect(try StateStore(directory: directory).loadDevices().count == 20_000, "another reader sees them")
        }
        // Closed: the log is copied into the database file.
        #expect(try size(path) > 4 << 20)
        #expect(try StateStore(directory: directory).loadDevices().count == 20_000)
    }

    @Test("a state directory's lock is held by one holder at a time, naming it, and freed with it")
    func directoryLock() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var holder: StateDirectoryLock? = try StateDirectoryLock(directory: directory)
        let error = try #require(throws: StateStoreError.self) { try StateDirectoryLock(directory: directory) }
        #expect(error.code == .lock)
        #expect(error.message.contains("\(directory) is in use by process \(getpid())"), "\(error.message)")
        // A reader of the store (pins list) takes no lock.
        #expect(try StateStore(directory: directory).loadDevices().isEmpty)
        withExtendedLifetime(holder) {}
        holder = nil
        #expect(throws: Never.self) { _ = try StateDirectoryLock(directory: directory) }
    }

    @Test("a directory that cannot be used gives a clear error")
    func unusableDirectory() throws {
        let file = temporaryDirectory()
        try #require(FileManager.default.createFile(atPath: file, contents: Data("not a directory".utf8)))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let error = try #require(throws: StateStoreError.self) { try StateStore(directory: file) }
        #expect(error.code == .open)
        #expect(!error.isRetriable)
    }

    @Test("a file that is not a SQLite database is refused, not overwritten")
    func notADatabase() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let garbage = Data(repeating: 0x42, count: 4096)
        try #require(FileManager.default.createFile(atPath: directory + "/" + StateStore.fileName, contents: garbage))
        let error = try #require(throws: StateStoreError.self) { try StateStore(directory: directory) }
        #expect(error.sqliteCode == 26, "SQLITE_NOTADB, got \(error)")
        #expect(FileManager.default.contents(atPath: directory + "/" + StateStore.fileName) == garbage)
    }
}

extension StateStoreHealth {
    /// What was found damaged; nil for a missing or healthy store.
    var damage: String? {
        if case .damaged(let finding) = self { return finding }
        return nil
    }
}
