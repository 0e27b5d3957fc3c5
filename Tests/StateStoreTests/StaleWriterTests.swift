import Foundation
import GeoCore
import PartitionOffsets
import StateStore
import Testing

/// What an instance that lost its partitions without knowing may leave behind, met by the store's rules: a late, older
/// state of a device in the changelog, and the changelog records it wrote after another instance's.
@Suite("State store: late writers", .timeLimit(.minutes(5)))
struct StaleWriterTests {
    func device(_ id: String, positions: Int64, commands: Int64, country: String) -> DeviceState {
        DeviceState(
            deviceId: id,
            country: country,
            inputPartition: 2,
            appliedOffsets: AppliedOffsets(positions: positions, commands: commands)
        )
    }

    @Test("a restore keeps each device's newer state, whichever came last: by its applied offsets, not write order")
    func restoreKeepsNewer() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let newer = device("d1", positions: 900, commands: 12, country: "FR")
        let older = device("d1", positions: 700, commands: 12, country: "BE")
        let other = device("d2", positions: 10, commands: 1, country: "DE")
        let otherLater = device("d2", positions: 11, commands: 1, country: "NL")

        let first = try store.restore(devices: [EncodedDevice(newer), EncodedDevice(other)], changelogOffsets: [2: 5])
        #expect(first == RestoreOutcome(), "devices the store did not hold: nothing replaced, nothing kept")
        let fresh = device("d3", positions: 1, commands: -1, country: "LU")
        let second = try store.restore(
            devices: [EncodedDevice(older), EncodedDevice(otherLater), EncodedDevice(fresh)],
            changelogOffsets: [2: 7]
        )
        #expect(second == RestoreOutcome(replaced: 1, keptNewer: 1), "d2's older state replaced, d1's newer one kept")
        let again = try store.restore(devices: [EncodedDevice(otherLater)], changelogOffsets: [2: 7])
        #expect(again == RestoreOutcome(), "the state the store holds, read again: neither")

        let stored = Dictionary(uniqueKeysWithValues: try store.loadDevices().map { ($0.deviceId, $0) })
        #expect(stored["d1"] == newer, "the late, older record does not replace the newer state")
        #expect(stored["d2"] == otherLater, "a newer record replaces an older state")
        #expect(try store.loadChangelogOffsets() == [2: 7])
    }

    @Test("a checkpoint's changelog records move the stored changelog offset only when nobody wrote before or between")
    func changelogOffsetOnlyWhenContiguous() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let state = EncodedDevice(device("d1", positions: 5, commands: -1, country: "FR"))
        try store.commit(devices: [], offsets: [:], changelogOffsets: [2: 100])

        try store.commit(devices: [state], offsets: [:]) { [2: OffsetSpan(first: 100, next: 103, count: 3)] }
        #expect(try store.loadChangelogOffsets() == [2: 103], "right after what the store had: it has them all")

        // Another instance wrote 103..<150 meanwhile: this store has not read those.
        try store.commit(devices: [state], offsets: [:]) { [2: OffsetSpan(first: 150, next: 152, count: 2)] }
        #expect(try store.loadChangelogOffsets() == [2: 103], "after a gap: the next restore reads from 103")

        // Another instance's records between this one's.
        try store.commit(devices: [state], offsets: [:]) { [2: OffsetSpan(first: 103, next: 110, count: 3)] }
        #expect(try store.loadChangelogOffsets() == [2: 103])

        // A partition the store never read: only records from its very start count.
        try store.commit(devices: [], offsets: [:]) {
            [4: OffsetSpan(first: 0, next: 2, count: 2), 5: OffsetSpan(first: 40, next: 42, count: 2)]
        }
        #expect(try store.loadChangelogOffsets() == [2: 103, 4: 2])
    }
}
