import GeoCore
import Kafka

/// One apply thread's devices: those whose id hashes to its index (``index(ofDevice:shardCount:)``), the
/// messages handed to it for them and not yet applied, and what it sent since the last checkpoint.
///
/// Shards share nothing, so the worker applies them in parallel. The loop merges each partition pair by
/// timestamp and hands every released message to its device's shard in that order, so a device's messages
/// are applied in merge order on one thread; which partitions they came from does not matter, so a device
/// whose positions and commands arrive on different partition numbers (producers with different
/// partitioners) still has one state. Each poll's messages spread over all shards, whatever partitions the
/// poll happened to read.
final class DeviceShard: @unchecked Sendable {
    // @unchecked: the worker touches a shard only from its loop thread, or from the one apply task that owns
    // the shard while the loop waits for every apply task to finish (`Worker.applyShards`).
    private(set) var processor: InputProcessor
    /// Handed over by the loop, in merge order, not yet applied.
    private var pending: [(record: ConsumerRecord, isCommand: Bool, origin: MessageOrigin)] = []
    /// What was sent since the last checkpoint.
    private var deliveries: [DeliveryBatch] = []

    init(processor: InputProcessor) {
        self.processor = processor
    }

    /// Whether messages wait to be applied.
    var hasPending: Bool { !pending.isEmpty }

    /// Queues a message of one of the shard's devices.
    func enqueue(_ record: ConsumerRecord, isCommand: Bool, origin: MessageOrigin) {
        pending.append((record, isCommand, origin))
    }

    /// Applies the queued messages in order and sends the resulting events and dead letters.
    func applyPending(producer: Producer) {
        for (record, isCommand, origin) in pending {
            record.withValue { value in
                record.withKey { key in
                    processor.process(value: value, key: key, isCommand: isCommand, origin: origin)
                }
            }
        }
        pending.removeAll(keepingCapacity: true)
        let output = processor.takeOutput()
        if !output.isEmpty { deliveries.append(producer.send(output)) }
    }

    /// Adds what was sent and changed since the last call, and forgets it.
    func takeCheckpoint(into checkpoint: inout CheckpointWriter.Checkpoint) {
        checkpoint.deliveries += deliveries
        checkpoint.devices.append(processor.takeChanges())
        deliveries = []
    }

    /// The shard of the device with this id (its UTF-8 bytes) among `shardCount`: FNV-1a, stable across runs
    /// and processes, so stored devices and their later messages meet on the same shard.
    static func index(ofDevice id: UnsafeRawBufferPointer, shardCount: Int) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in id { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return Int(hash % UInt64(shardCount))
    }

    static func index(ofDevice id: String, shardCount: Int) -> Int {
        var id = id
        return id.withUTF8 { index(ofDevice: UnsafeRawBufferPointer($0), shardCount: shardCount) }
    }
}
