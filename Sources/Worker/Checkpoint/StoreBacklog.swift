import GeoCore
import Kafka
import PartitionOffsets

/// What checkpoints wrote to the changelog and not yet to the store: the newest encoded state of each device they
/// changed, the input offsets they covered, and where their changelog records landed.
///
/// The store may lag its changelog (``WorkerConfiguration/storeInterval``), as Kafka Streams' stores flush less
/// often than they log: a steady stream changes most devices every second, and writing each row once in several
/// seconds instead of every second is most of a checkpoint's cost. Nothing here is needed for the guarantee: the
/// changelog holds all of it, and a restart restores it (``ChangelogRestore``).
struct StoreBacklog: Equatable, Sendable {
    /// The newest state of each device, by id.
    private(set) var devices: [String: EncodedDevice] = [:]
    /// The next input offset of each partition covered.
    private(set) var offsets: [TopicPartition: Int64] = [:]
    /// Where the checkpoints' changelog records landed, per changelog partition, one span over all of them.
    private(set) var spans: [Int32: OffsetSpan] = [:]

    var isEmpty: Bool { devices.isEmpty && offsets.isEmpty }

    /// Adds a checkpoint whose changelog records were delivered; its states are newer than those held.
    mutating func add(devices changed: [EncodedDevice], offsets: [TopicPartition: Int64], spans: [Int32: OffsetSpan]) {
        for device in changed { devices[device.deviceId] = device }
        self.offsets.merge(offsets) { $1 }
        self.spans = self.spans(followedBy: spans)
    }

    /// The rows one store write covers: `newer` (a checkpoint's devices), and the backlog's devices it does not hold.
    ///
    /// Without copying the backlog's table: a stored checkpoint every few seconds would copy every device held.
    func rows(updatedBy newer: [EncodedDevice]) -> [EncodedDevice] {
        guard !devices.isEmpty else { return newer }
        let updated = Set(newer.map(\.deviceId))
        var rows = newer
        rows.reserveCapacity(newer.count + devices.count)
        for (deviceId, device) in devices where !updated.contains(deviceId) { rows.append(device) }
        return rows
    }

    /// The backlog's changelog spans with a later checkpoint's after them: one span per partition over both.
    func spans(followedBy later: [Int32: OffsetSpan]) -> [Int32: OffsetSpan] {
        spans.merging(later) { earlier, later in
            // Contiguous only while nobody else wrote between the checkpoints' records either.
            OffsetSpan(
                first: min(earlier.first, later.first),
                next: max(earlier.next, later.next),
                count: earlier.count + later.count
            )
        }
    }
}
