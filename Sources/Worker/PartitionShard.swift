import GeoCore
import Kafka

/// One apply thread's share of the input: the partition pairs whose number is `index` modulo the shard count,
/// their timestamp merges, the devices whose messages they carry, and what was sent and applied for them
/// since the last checkpoint.
///
/// Shards share nothing, so the worker applies them in parallel: both input topics are keyed by device id and
/// co-partitioned (ARCHITECTURE.md), so every message of a device, and its stored state, belongs to exactly
/// one partition pair, hence to one shard. That is the Kafka Streams model of tasks per partition.
final class PartitionShard: @unchecked Sendable {
    // @unchecked: the worker touches a shard only from its loop thread, or from the one apply task that owns
    // the shard while the loop waits for every apply task to finish (`Worker.applyShards`).
    private(set) var processor: InputProcessor
    /// One merge per partition pair the shard owns, at `partition / shardCount`.
    private var merges: [PartitionPairMerge<ConsumerRecord>] = []
    /// The shard's partitions are those with `partition % shardCount == index`.
    private let index: Int
    private let shardCount: Int
    /// What was sent since the last checkpoint.
    private var deliveries: [DeliveryBatch] = []
    /// The next input offset of every partition with messages applied since the last checkpoint.
    private var offsets: [TopicPartition: Int64] = [:]

    init(processor: InputProcessor, index: Int, shardCount: Int) {
        self.processor = processor
        self.index = index
        self.shardCount = shardCount
    }

    /// The shard that owns `partition` among `shardCount`.
    static func index(of partition: Int32, shardCount: Int) -> Int { Int(partition) % shardCount }

    /// Nothing buffered that waits to be applied.
    var isEmpty: Bool { merges.allSatisfy(\.isEmpty) }

    /// Buffers a record of one of the shard's partitions.
    func append(_ record: ConsumerRecord, isCommand: Bool) {
        let slot = Int(record.partition) / shardCount
        if slot >= merges.count {
            merges += Array(repeating: PartitionPairMerge(), count: slot + 1 - merges.count)
        }
        merges[slot].append(
            record,
            timestamp: record.timestampMilliseconds ?? 0,
            side: isCommand ? .commands : .positions
        )
    }

    /// Applies what each of the shard's merges releases now and sends the resulting events and dead letters.
    func applyMerged(
        atEnd: Set<TopicPartition>,
        now: ContinuousClock.Instant,
        mergeWait: Duration,
        producer: Producer
    ) {
        let topics = processor.topics
        for slot in merges.indices where !merges[slot].isEmpty {
            let number = Int32(slot * shardCount + index)
            // The next offsets after what is applied, noted once per pair rather than per message.
            var nextOffsets: (positions: Int64?, commands: Int64?)
            while let (record, side) = merges[slot].next(
                positionsAtEnd: atEnd.contains(TopicPartition(topics.positions, number)),
                commandsAtEnd: atEnd.contains(TopicPartition(topics.commands, number)),
                now: now,
                maximumWait: mergeWait,
                unfetchedSideWait: Worker.unfetchedSideWait
            ) {
                let isCommand = side == .commands
                let origin = MessageOrigin(
                    topic: isCommand ? topics.commands : topics.positions,
                    partition: number,
                    offset: record.offset,
                    timestamp: record.timestampMilliseconds ?? 0
                )
                record.withValue { value in
                    record.withKey { key in
                        processor.process(value: value, key: key, isCommand: isCommand, origin: origin)
                    }
                }
                if isCommand {
                    nextOffsets.commands = record.offset + 1
                } else {
                    nextOffsets.positions = record.offset + 1
                }
            }
            if let next = nextOffsets.positions { offsets[TopicPartition(topics.positions, number)] = next }
            if let next = nextOffsets.commands { offsets[TopicPartition(topics.commands, number)] = next }
        }
        let output = processor.takeOutput()
        if !output.isEmpty { deliveries.append(producer.send(output)) }
    }

    /// Adds what was sent, changed and applied since the last call to `checkpoint`, and forgets it.
    func takeCheckpoint(into checkpoint: inout CheckpointWriter.Checkpoint) {
        checkpoint.deliveries += deliveries
        checkpoint.devices.append(processor.takeChanges())
        checkpoint.offsets.merge(offsets) { $1 }
        deliveries = []
        offsets = [:]
    }

    /// Drops what is buffered for a revoked partition pair (its next owner reads it again from the checkpoint).
    func removeAll(partition: Int32) {
        let slot = Int(partition) / shardCount
        if slot < merges.count { merges[slot].removeAll() }
    }
}
