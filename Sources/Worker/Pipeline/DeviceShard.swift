import GeoCore
import JSONCodec
import Kafka

/// One apply thread's devices: those ``DeviceRouting`` gives its index, the messages handed to it for them
/// and not yet applied, and what it sent since the last checkpoint.
///
/// Shards share nothing, so the worker processes them in parallel (``ShardedDevices``, ``ApplyThreads``). A
/// device's messages reach its shard in merge order, so they are applied in that order on one thread.
final class DeviceShard: @unchecked Sendable {
    // @unchecked: `processor` and `deliveries` belong to the shard's apply thread while it has messages to
    // process or changes to take (``ApplyThreads``), to the loop otherwise: it touches them only once
    // ``ApplyThreads/waitUntilApplied()`` returned.
    private(set) var processor: InputProcessor
    /// A message queued for the apply thread (``ShardedDevices/enqueue(_:kind:origin:streamTime:)``); `decoded` when
    /// routing had to decode it.
    struct Message {
        let record: ConsumerRecord
        let kind: InputKind
        let origin: MessageOrigin
        let decoded: Result<InputMessage, DecodingFailure>?
        /// Its pair's stream time before it (``StreamClock``): the silences it passed are announced before the message
        /// is applied, so that a device's fix after them finds its silence announced whatever the batching.
        let streamTime: Int64
    }
    /// What was sent since the last checkpoint.
    private var deliveries: [DeliveryBatch] = []
    /// Where the shard's counts go when it is done with its part of a round.
    private let tally: ProcessingTally

    /// Brings the devices' grid of last fixes up to date: on the loop, while the shard is still (an operations
    /// question), like every reading of `processor` there.
    func updateLastFixes() { processor.updateLastFixes() }

    /// What a shard sent and changed since the last checkpoint: its part of the next ``Checkpoint``.
    struct Changes: Sendable {
        /// Everything sent: events and dead letters.
        var deliveries: [DeliveryBatch]
        /// The devices changed (all of them, or the eventful ones: ``DeviceRegistry/Changes``), as they are now: copies, which share their storage with the shard's until it
        /// changes them again; encoded by the checkpoint's writer (``Checkpoint/encodedDevices()``).
        var devices: [DeviceState]
    }

    init(processor: InputProcessor, tally: ProcessingTally) {
        self.processor = processor
        self.tally = tally
    }

    /// On the apply thread: has the processor apply `messages` in order, then announce the silences their partitions'
    /// stream times passed (`streamAdvances`, the round's), sends the resulting events and dead letters, offers the
    /// events to the live feed, and adds what it counted to the tally.
    func process(
        _ messages: [Message],
        streamAdvances: [StreamClock.Advance],
        producer: Producer,
        feed: EventFeed
    ) {
        // The processor and the deliveries passed in place for the whole round: reached through the object at
        // each message, each access was an exclusivity check.
        Self.process(
            messages,
            streamAdvances: streamAdvances,
            with: &processor,
            deliveries: &deliveries,
            producer: producer,
            feed: feed
        )
        processor.moveCounts(into: tally)
    }

    private static func process(
        _ messages: [Message],
        streamAdvances: [StreamClock.Advance],
        with processor: inout InputProcessor,
        deliveries: inout [DeliveryBatch],
        producer: Producer,
        feed: EventFeed
    ) {
        // Read in place: a copy of a message, or a call on its record, would retain (and then release) its
        // record's batch, whose count the loop's thread changes too.
        messages.withUnsafeBufferPointer { messages in
            guard var message = messages.baseAddress else { return }
            for _ in messages.indices {
                // Silence by message order: what the messages before this one passed (other shards' too) is announced
                // before it is applied, so that a device's silence depends on the merge's order, not on the rounds.
                let origin = message.pointee.origin
                processor.announceSilences(inPartition: origin.partition, upTo: message.pointee.streamTime)
                ConsumerRecord.withKeyAndValue(ofRecordAt: message.pointer(to: \.record)!) { key, value in
                    processor.process(
                        value: value,
                        key: key,
                        kind: message.pointee.kind,
                        origin: origin,
                        decoded: message.pointee.decoded,
                        streamTime: message.pointee.streamTime
                    )
                }
                if processor.outputEventBytes >= eventBytesPerSend {
                    send(&processor, deliveries: &deliveries, producer: producer, feed: feed)
                }
                message += 1
            }
        }
        // After the round's messages, the times they moved to: for the devices with no message after them.
        for advance in streamAdvances {
            processor.announceSilences(
                inPartition: advance.partition,
                upTo: advance.time,
                byWallClock: advance.byWallClock
            )
        }
        send(&processor, deliveries: &deliveries, producer: producer, feed: feed)
    }

    /// How many bytes of events the shard encodes before it sends them.
    ///
    /// A catch-up round hands a shard thousands of messages with a few events each: sent only at the round's end,
    /// they would grow the buffer to tens of megabytes, held until the round is done. Sent at this size, the buffer
    /// stays small and in the core's cache while librdkafka copies the events out.
    static let eventBytesPerSend = 256 * 1024

    /// Sends what the processor gave since the last send and offers the events to the live feed.
    private static func send(
        _ processor: inout InputProcessor,
        deliveries: inout [DeliveryBatch],
        producer: Producer,
        feed: EventFeed
    ) {
        processor.withOutput { output in
            if !output.events.isEmpty {
                feed.offer(output.events)
                deliveries.append(producer.send(output.events))
            }
            if !output.deadLetters.isEmpty { deliveries.append(producer.send(output.deadLetters)) }
        }
    }

    /// What was sent since the last call and `which` devices changed since they were last taken, and forgets them: on
    /// the apply thread, while the shards are stopped (``ApplyThreads/takeChanges(of:_:)``).
    ///
    /// The changed devices are copied, not encoded: every event waits while the shards are stopped, and a copy is
    /// much cheaper than an encoding. The checkpoint thread encodes them behind the shards
    /// (``Checkpoint/encodedDevices()``).
    func takeChanges(_ which: DeviceRegistry.Changes) -> Changes {
        let devices = processor.takeChanges(which)
        defer { deliveries = [] }
        return Changes(deliveries: deliveries, devices: devices)
    }
}
