import GeoCore
import Kafka
import PartitionOffsets

/// The device-state changelog topic: what lets a partition's devices move to whichever instance of the group
/// is assigned it, the way Kafka Streams backs a state store with a changelog.
///
/// Compacted, keyed by device id, co-partitioned with the positions topic: a device's record goes to the
/// changelog partition with the number of the input partition its messages arrive on
/// (``DeviceState/inputPartition``), so whoever is assigned input partition `p` restores exactly its devices
/// from changelog partition `p`. A record's value is the device's whole state in ``DeviceStateEncoding``
/// (applied offsets included): compaction keeps each device's latest, and a restore needs nothing else.
public enum DeviceChangelog {
    /// The topic's default name for a consumer group: `<groupId>-device-state-changelog`.
    public static func defaultTopic(groupId: String) -> String { "\(groupId)-device-state-changelog" }

    /// The topic-level settings the changelog needs: compaction keeps each device's latest record for ever.
    public static let topicConfiguration = ["cleanup.policy": "compact"]

    /// Where a checkpoint sends its devices' records.
    struct Sink: Sendable {
        let topic: String
        /// The worker's producer when the checkpoint was taken (a rewind replaces it).
        let producer: Producer

        /// One record per device, to the partition of its input partition's number.
        func records(for devices: [EncodedDevice]) -> [ProducerRecord] {
            devices.map { device in
                ProducerRecord(
                    topic: topic,
                    partition: device.partition,
                    key: Array(device.deviceId.utf8),
                    value: device.bytes
                )
            }
        }
    }

    /// For each partition the delivered records went to, where they landed: the store's copy of that changelog
    /// partition reaches their end once they are written, if nobody else wrote between (``StateStore``).
    ///
    /// Waits for every report.
    static func spans(of batch: DeliveryBatch) -> [Int32: OffsetSpan] {
        Dictionary(uniqueKeysWithValues: batch.waitForSpans().map { ($0.key.partition, $0.value) })
    }
}
