import GeoCore
import Kafka

/// One apply thread's devices: those ``DeviceRouting`` gives its index, the messages handed to it for them
/// and not yet applied, and what it sent since the last checkpoint.
///
/// Shards share nothing, so the worker applies them in parallel (``DeviceShards``). A device's messages reach
/// its shard in merge order, so they are applied in that order on one thread.
final class DeviceShard: @unchecked Sendable {
    // @unchecked: the worker touches a shard only from its loop thread, or from the one apply task that owns
    // the shard while the loop waits for every apply task to finish (`DeviceShards.applyPending`).
    private(set) var processor: InputProcessor
    /// Handed over by the loop, in merge order, not yet applied; `decoded` when routing had to decode it.
    private var pending:
        [(
            record: ConsumerRecord, kind: InputKind, origin: MessageOrigin,
            decoded: Result<InputMessage, DecodingFailure>?
        )] =
            []
    /// What was sent since the last checkpoint.
    private var deliveries: [DeliveryBatch] = []

    init(processor: InputProcessor) {
        self.processor = processor
    }

    /// Whether messages wait to be applied.
    var hasPending: Bool { !pending.isEmpty }

    /// Queues a message of one of the shard's devices.
    func enqueue(
        _ record: ConsumerRecord,
        kind: InputKind,
        origin: MessageOrigin,
        decoded: Result<InputMessage, DecodingFailure>?
    ) {
        pending.append((record, kind, origin, decoded))
    }

    /// Applies the queued messages in order, sends the resulting events and dead letters, and offers the
    /// events to the live feed.
    func applyPending(producer: Producer, feed: EventFeed) {
        for (record, kind, origin, decoded) in pending {
            record.withValue { value in
                record.withKey { key in
                    processor.process(value: value, key: key, kind: kind, origin: origin, decoded: decoded)
                }
            }
        }
        pending.removeAll(keepingCapacity: true)
        let output = processor.takeOutput()
        guard !output.isEmpty else { return }
        feed.offer(output, eventsTopic: processor.topics.events)
        deliveries.append(producer.send(output))
    }

    /// Adds what was sent and changed since the last call, and forgets it.
    func takeCheckpoint(into checkpoint: inout CheckpointWriter.Checkpoint) {
        checkpoint.deliveries += deliveries
        checkpoint.devices.append(processor.takeChanges())
        deliveries = []
    }
}
