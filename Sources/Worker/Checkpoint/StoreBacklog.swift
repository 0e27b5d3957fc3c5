import GeoCore
import Kafka

/// What checkpoints wrote to the changelog and not yet to the store: the newest encoded state of each device they
/// changed, the input offsets they covered, and where their changelog records landed.
///
/// The store may lag its changelog (``WorkerConfiguration/storeInterval``), as Kafka Streams' stores flush less
/// often than they log: a steady stream changes most devices every second, and writing each row once in several
/// seconds instead of every second is most of a checkpoint's cost. Nothing here is needed for the guarantee: the
/// changelog holds all of it, and a restart restores it (``ChangelogRestore``).
struct StoreBacklog {
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
        self.spans.merge(spans) { earlier, later in
            // Contiguous only while nobody else wrote between the checkpoints' records either.
            OffsetSpan(
                first: min(earlier.first, later.first),
                next: max(earlier.next, later.next),
                count: earlier.count + later.count
            )
        }
    }

    /// The backlog with a checkpoint's devices, offsets and spans on top: what one store write covers.
    func adding(devices changed: [EncodedDevice], offsets: [TopicPartition: Int64], spans: [Int32: OffsetSpan]) -> Self
    {
        var combined = self
        combined.add(devices: changed, offsets: offsets, spans: spans)
        return combined
    }
}
