import GeoCore
import Kafka

/// What one checkpoint covers, taken whole by the ``CheckpointCoordinator``: every record sent since the previous
/// checkpoint, the devices changed since then, and the next offset of every input partition applied since then.
///
/// Written by the ``CheckpointWriter`` in the order of the processing guarantee.
struct Checkpoint: Sendable {
    /// Everything sent since the previous checkpoint: events and dead letters.
    var deliveries: [DeliveryBatch] = []
    /// The devices changed since the previous checkpoint, as they were when it was taken, encoded: one list
    /// per shard, each in device-id order.
    var devices: [[EncodedDevice]] = []
    /// For each input partition with messages applied since the previous checkpoint, the next offset.
    var offsets: [TopicPartition: Int64] = [:]
    /// Where the changed devices' records go, through the changelog's producer of the moment; nil when the
    /// worker runs without a changelog.
    var changelog: DeviceChangelog.Sink?
    /// What proves, before the changelog records are sent, that the partitions are still this instance's; nil
    /// when nobody asks (no group, or nothing stored to commit yet).
    var membership: MembershipCheck?

    init(
        deliveries: [DeliveryBatch] = [],
        devices: [[EncodedDevice]] = [],
        offsets: [TopicPartition: Int64] = [:],
        changelog: DeviceChangelog.Sink? = nil,
        membership: MembershipCheck? = nil
    ) {
        self.deliveries = deliveries
        self.devices = devices
        self.offsets = offsets
        self.changelog = changelog
        self.membership = membership
    }

    /// The shards' changes, the applied offsets, the changelog and the membership check, as one checkpoint.
    init(
        shards: [DeviceShard.Changes],
        offsets: [TopicPartition: Int64],
        changelog: DeviceChangelog.Sink?,
        membership: MembershipCheck?
    ) {
        self.init(
            deliveries: shards.flatMap(\.deliveries),
            devices: shards.map(\.devices),
            offsets: offsets,
            changelog: changelog,
            membership: membership
        )
    }

    var isEmpty: Bool { deliveries.isEmpty && devices.allSatisfy(\.isEmpty) && offsets.isEmpty }
}
