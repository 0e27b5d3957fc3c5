import GeoCore
import Kafka
import PartitionOffsets

/// What one checkpoint covers, taken whole by the loop when its ``CheckpointCycle`` says: every record sent since the previous
/// checkpoint, the devices changed since they were last logged, and the next offset of every input partition applied
/// since the previous complete checkpoint; or, between two stored checkpoints under at-least-once, only the devices with
/// an eventful change and no offset (``CheckpointCycle/Scope``).
///
/// Written by the ``CheckpointWriter`` in the order of the processing guarantee.
struct Checkpoint: Sendable {
    /// Everything sent since the previous checkpoint: events and dead letters.
    var deliveries: [DeliveryBatch] = []
    /// The devices changed since the previous checkpoint, as they were when it was taken, one list per shard: the
    /// shards' copies, which ``encodedDevices()`` encodes on the writing thread.
    var devices: [[DeviceState]] = []
    /// For each input partition with messages applied since the previous complete checkpoint, the next offset; empty in
    /// an eventful checkpoint.
    var offsets: [TopicPartition: Int64] = [:]
    /// Whether it logs every changed device and the applied offsets, or only the eventful changes.
    var isComplete = true
    /// Where the changed devices' records go, through the changelog's producer of the moment; nil when the
    /// worker runs without a changelog.
    var changelog: DeviceChangelog.Sink?
    /// What proves, before the changelog records are sent, that the partitions are still this instance's; nil
    /// when nobody asks (no group, or nothing stored to commit yet).
    var membership: MembershipCheck?
    /// Under exactly-once, the open transaction, committed with ``offsets`` once everything is delivered into it.
    var transaction: CheckpointTransaction?

    init(
        deliveries: [DeliveryBatch] = [],
        devices: [[DeviceState]] = [],
        offsets: [TopicPartition: Int64] = [:],
        isComplete: Bool = true,
        changelog: DeviceChangelog.Sink? = nil,
        membership: MembershipCheck? = nil,
        transaction: CheckpointTransaction? = nil
    ) {
        self.deliveries = deliveries
        self.devices = devices
        self.offsets = offsets
        self.isComplete = isComplete
        self.changelog = changelog
        self.membership = membership
        self.transaction = transaction
    }

    /// The shards' changes, the applied offsets, the changelog and the membership check, as one checkpoint.
    init(
        shards: [DeviceShard.Changes],
        offsets: [TopicPartition: Int64],
        isComplete: Bool = true,
        changelog: DeviceChangelog.Sink?,
        membership: MembershipCheck?,
        transaction: CheckpointTransaction? = nil
    ) {
        self.init(
            deliveries: shards.flatMap(\.deliveries),
            devices: shards.map(\.devices),
            offsets: offsets,
            isComplete: isComplete,
            changelog: changelog,
            membership: membership,
            transaction: transaction
        )
    }

    var isEmpty: Bool {
        deliveries.isEmpty && devices.allSatisfy(\.isEmpty) && offsets.isEmpty
    }

    /// Every changed device encoded as the store and the changelog keep it (in no particular order: the store sorts
    /// the rows it writes, and most checkpoints only log them).
    ///
    /// On the checkpoint's writing thread: the states are the shards' copies, and encoding them here keeps the
    /// shards' stop short.
    func encodedDevices() -> [EncodedDevice] {
        var all: [EncodedDevice] = []
        all.reserveCapacity(devices.reduce(0) { $0 + $1.count })
        for shard in devices {
            for state in shard { all.append(EncodedDevice(state)) }
        }
        return all
    }
}
