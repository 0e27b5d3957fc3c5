import Countries
import Foundation
import GeoCore
import Kafka
public import Logging
public import Metrics
import StateStore
import Synchronization

/// The geoworker service: consumes positions and commands, applies them, publishes events, and persists
/// state and offsets so that a restart neither loses nor re-announces anything.
///
/// One loop, on the thread that calls ``run()``: poll a batch; merge each co-partitioned pair by timestamp
/// (``InputMerge``) and hand what the merges release to the ``DeviceShard`` of each message's device;
/// then, on ``WorkerConfiguration/applyThreads`` threads at once, each shard applies its messages
/// (``InputProcessor``) and sends the events and dead letters.
/// Every ``WorkerConfiguration/checkpointInterval``, and before partitions are revoked or the worker stops,
/// the loop takes a checkpoint (what was sent, the changed devices, the next input offsets) and hands it to
/// the ``CheckpointWriter``, which waits for every record it covers to be delivered, then writes the devices
/// and offsets in one SQLite transaction, then commits the offsets to the consumer group, while the loop
/// goes on. SQLite is the source of truth for where to resume: on assignment each partition starts at its
/// stored offset. A crash replays at most what came after the last written checkpoint, re-emitting the same
/// events with the same ids.
public final class Worker: @unchecked Sendable {
    // @unchecked: all mutable state below is touched only by the thread in `run()` (the rebalance hooks run
    // inside `poll`, on that thread), except each shard, which its apply task has to itself while the loop
    // waits (see `applyShards`); `stopRequested` is the one cross-thread value, and it is atomic.
    public let configuration: WorkerConfiguration
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    /// Where the worker is in its life, for health and readiness probes.
    public let health = WorkerHealth()
    private var metrics: WorkerMetrics

    /// The devices, split for the apply threads by a hash of their id (``DeviceShard/index(ofDevice:shardCount:)``).
    private let shards: [DeviceShard]
    /// The partition pairs' merges, and the next offsets of what they released since the last checkpoint.
    private var merge: InputMerge<ConsumerRecord>
    private let checkpoints: CheckpointWriter
    /// How long a pair waits for a side that has given nothing since the assignment (see
    /// ``PartitionPairMerge``): long enough for a slow first fetch, bounded so that an unavailable partition
    /// does not stop its partner for ever.
    static let unfetchedSideWait: Duration = .seconds(30)
    /// A failure met inside a rebalance hook, where it cannot be thrown; the loop throws it.
    private var failure: WorkerError?

    /// librdkafka consumer properties the worker sets unless the operator sets them (`--kafka`).
    static let consumerDefaults = [
        // Range assignment gives one member the same partition numbers of both topics.
        "partition.assignment.strategy": "range",
        // librdkafka 2.0 stops fetching for every partition once the consumer's one queue holds this many
        // messages (default 100000) and notices late that it has drained: during a catch-up the worker then
        // idled in empty polls for ~25 % of the time. The queue stays bounded by queued.max.messages.kbytes
        // (64 MB by default), which holds seconds of work.
        "queued.min.messages": "1000000",
    ]

    /// Opens the state directory and loads the country index and every stored device.
    ///
    /// - Parameter metricsFactory: where the metrics go. Default: the process's bootstrapped factory.
    /// - Throws: ``WorkerError`` when the state directory or the country index cannot be read.
    public init(
        configuration: WorkerConfiguration,
        logger: Logger = Logger(label: "geoworker"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) throws(WorkerError) {
        self.configuration = configuration
        self.logger = logger
        self.metrics = WorkerMetrics(factory: metricsFactory)
        self.merge = InputMerge(
            topics: configuration.topics,
            mergeWait: configuration.mergeWait,
            unfetchedSideWait: Self.unfetchedSideWait
        )
        let countries: CountryIndex
        let languages: CountryLanguages
        do {
            countries = try CountryIndex.bundled(coastalTolerance: configuration.coastalTolerance)
            languages = try CountryLanguages.bundled()
        } catch {
            throw WorkerError(.countries, "cannot read the bundled country data: \(error)")
        }
        do {
            let store = try StateStore(directory: configuration.stateDirectory)
            checkpoints = CheckpointWriter(store: store, storedOffsets: try store.loadOffsets())
            let tracker = DeviceTracker(
                configuration: configuration.tracker,
                countries: countries,
                languages: languages
            )
            // Each stored device goes to the shard its messages will go to, whatever the thread count was.
            let shardCount = max(1, configuration.applyThreads)
            var states = Array(repeating: [DeviceState](), count: shardCount)
            for state in try store.loadDevices() {
                states[DeviceShard.index(ofDevice: state.deviceId, shardCount: shardCount)].append(state)
            }
            shards = states.map { states in
                DeviceShard(
                    processor: InputProcessor(
                        registry: DeviceRegistry(tracker: tracker, states: states),
                        topics: configuration.topics
                    )
                )
            }
        } catch {
            throw WorkerError(.state, "state directory \(configuration.stateDirectory): \(error)")
        }
    }

    deinit {
        checkpoints.stop()
    }

    /// What has been processed so far.
    public var counters: ProcessingCounters {
        shards.reduce(into: ProcessingCounters()) { $0 += $1.processor.counters }
    }

    /// Records how many devices and tracked pins the worker holds, and returns them.
    @discardableResult
    private func recordHoldings() -> (devices: Int, pins: Int) {
        let held = shards.reduce(into: (devices: 0, pins: 0)) {
            $0.devices += $1.processor.registry.count
            $0.pins += $1.processor.registry.pinCount
        }
        metrics.recordHeld(devices: held.devices, pins: held.pins)
        return held
    }

    /// Asks ``run()`` to finish: it completes the batch in flight, checkpoints, leaves the group and returns.
    /// Safe from any thread (a signal handler's task, for example).
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
    }

    /// Runs until ``stop()`` (or, with ``WorkerConfiguration/untilCaughtUp``, until every assigned partition
    /// has been processed to its end). Blocks the calling thread: give it a thread of its own.
    ///
    /// - Throws: ``WorkerError`` when the topics are missing or not co-partitioned, Kafka fails for good, a
    ///   record cannot be delivered, or the state cannot be written. What was checkpointed stays valid; a
    ///   restart resumes from there.
    @available(*, noasync, message: "blocks the calling thread for the worker's lifetime; use the async run")
    public func run() throws(WorkerError) {
        try runLoop()
    }

    /// ``run()`` on a thread of its own (never on Swift's cooperative pool), suspending until it returns.
    public func run() async throws(WorkerError) {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, WorkerError>, Never>) in
            let thread = Thread { [self] in
                continuation.resume(returning: Result { () throws(WorkerError) in try runLoop() })
            }
            thread.name = "geoworker"
            thread.start()
        }
        try result.get()
    }

    private func runLoop() throws(WorkerError) {
        do {
            try consumeUntilStopped()
            health.enter(.stopped)
        } catch {
            health.enter(.failed)
            throw error
        }
    }

    private func consumeUntilStopped() throws(WorkerError) {
        let topics = configuration.topics
        let producer: Producer
        let consumer: Consumer
        do {
            producer = try Producer(
                configuration: ProducerConfiguration(
                    bootstrapServers: configuration.brokers,
                    // The loop hands over each poll's events at once, so librdkafka's 5 ms wait for a fuller
                    // batch mostly adds to every event's latency (service-bench: median send -> delivered
                    // 10 -> 7 ms, catch-up rate unchanged).
                    linger: .milliseconds(1),
                    // Deliveries wait out broker outages (0 = no timeout): progress pauses, nothing is lost.
                    deliveryTimeout: .zero,
                    properties: configuration.kafkaProperties(for: .producer)
                ),
                logger: logger
            )
            consumer = try Consumer(
                configuration: ConsumerConfiguration(
                    bootstrapServers: configuration.brokers,
                    groupID: configuration.groupID,
                    properties: Self.consumerDefaults.merging(configuration.kafkaProperties(for: .consumer)) { $1 }
                ),
                subscription: .group(topics: [topics.positions, topics.commands]),
                rebalanceHandler: RebalanceHandler(
                    onAssign: { [unowned self] partitions in startOffsets(for: partitions) },
                    onRevoke: { [unowned self] partitions, isLost in revoke(partitions, isLost: isLost) }
                ),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "\(error)")
        }
        defer {
            // Closing the consumer revokes its partitions, which checkpoints what was applied (the producer is
            // still there to deliver it); closing the producer then purges anything it could not deliver, so
            // that no checkpoint waits for ever.
            consumer.close()
            producer.close()
        }
        try checkTopics(consumer)
        health.enter(.running)
        let held = recordHoldings()
        logger.info(
            "geoworker running",
            metadata: [
                "brokers": "\(configuration.brokers)", "group": "\(configuration.groupID)",
                "positions": "\(topics.positions)", "commands": "\(topics.commands)",
                "events": "\(topics.events)", "devices": "\(held.devices)", "applyThreads": "\(shards.count)",
            ]
        )

        let clock = ContinuousClock()
        var lastCheckpoint = clock.now
        var firstMessage: ContinuousClock.Instant?
        var caughtUp = false
        while !stopRequested.load(ordering: .acquiring) {
            let batch: ConsumerBatch
            do {
                batch = try consumer.poll(maxMessages: configuration.maximumBatch, timeout: .milliseconds(100))
            } catch {
                throw WorkerError(.kafka, "consumer failed: \(error)")
            }
            if let failure = failure ?? checkpoints.failed { throw failure }
            let batchStart = clock.now
            if firstMessage == nil && !batch.isEmpty { firstMessage = batchStart }
            for error in batch.errors { logger.warning("kafka: \(error)") }
            for record in batch { merge.append(record, isCommand: record.topic == topics.commands) }
            merge.release(atEnd: consumer.partitionsAtEnd, now: clock.now) { record, isCommand, origin in
                shards[shardIndex(of: record, isCommand: isCommand)].enqueue(
                    record,
                    isCommand: isCommand,
                    origin: origin
                )
            }
            applyShards(producer: producer)
            if !batch.isEmpty { metrics.recordBatch(clock.now - batchStart) }
            metrics.publish(counters)

            if clock.now - lastCheckpoint >= configuration.checkpointInterval {
                try checkpoint(consumer)
                lastCheckpoint = clock.now
            }
            if configuration.untilCaughtUp && merge.isEmpty && consumer.hasReachedEndOfAssignment {
                caughtUp = true
                break
            }
        }
        health.enter(.stopping)
        try checkpoint(consumer)
        try checkpoints.waitUntilWritten()
        if caughtUp {
            // From the first message to the last checkpoint: what replays and benchmarks want to know.
            let counters = counters
            logger.info(
                "caught up with every assigned partition",
                metadata: [
                    "positions": "\(counters.positions)", "commands": "\(counters.commands)",
                    "elapsed": "\(firstMessage.map { clock.now - $0 } ?? .zero)",
                ]
            )
        }
        logger.info("geoworker stopped", metadata: ["devices": "\(recordHoldings().devices)"])
    }

    /// The shard of a record's device: by the record's key, which the message contract makes the device id,
    /// so hashing it needs no decoding. A record without a key goes by the device id in its payload, and one
    /// without either to shard 0, whose processor dead-letters it.
    private func shardIndex(of record: ConsumerRecord, isCommand: Bool) -> Int {
        let count = shards.count
        guard count > 1 else { return 0 }
        let byKey: Int? = record.withKey { key in
            guard let key, !key.isEmpty else { return nil }
            return DeviceShard.index(ofDevice: key, shardCount: count)
        }
        if let byKey { return byKey }
        let deviceId: String? = record.withValue { value in
            guard let value else { return nil }
            return isCommand
                ? (try? DeviceCommand.decode(json: value).get())?.deviceId
                : (try? Position.decode(json: value).get())?.deviceId
        }
        return deviceId.map { DeviceShard.index(ofDevice: $0, shardCount: count) } ?? 0
    }

    /// Lets every shard with messages apply them and send the results, on up to
    /// ``WorkerConfiguration/applyThreads`` threads at once (this one included); returns when all are done.
    private func applyShards(producer: Producer) {
        let busy = shards.filter(\.hasPending)
        // One busy shard (or none) runs on this thread, with no hand-off.
        DispatchQueue.concurrentPerform(iterations: busy.count) { index in
            busy[index].applyPending(producer: producer)
        }
    }

    /// Takes a checkpoint and hands it to the writer (which first finishes the previous one), then commits
    /// its offsets to the group once written (for lag monitoring; SQLite stays the source of truth).
    private func checkpoint(_ consumer: Consumer) throws(WorkerError) {
        try submitCheckpoint { [logger] offsets in
            do {
                try consumer.commit(offsets)
            } catch {
                // Only a fallback and a lag signal: the next checkpoint commits again.
                logger.debug("group offset commit deferred: \(error)")
            }
        }
        recordLagAndHoldings(consumer)
    }

    private func submitCheckpoint(
        afterWrite: @escaping @Sendable ([TopicPartition: Int64]) -> Void = { _ in }
    ) throws(WorkerError) {
        var taken = CheckpointWriter.Checkpoint(offsets: merge.takeOffsets())
        for shard in shards { shard.takeCheckpoint(into: &taken) }
        try checkpoints.submit(taken, afterWrite: afterWrite)
    }

    /// Lag per assigned partition: its high watermark minus the next offset persisted for it (partitions with
    /// nothing persisted yet are left out until their first checkpoint).
    private func recordLagAndHoldings(_ consumer: Consumer) {
        var lags: [TopicPartition: Int64] = [:]
        let storedOffsets = checkpoints.storedOffsets
        for (partition, high) in consumer.cachedHighWatermarks(for: consumer.assignment) {
            if let next = storedOffsets[PartitionKey(topic: partition.topic, partition: partition.partition)] {
                lags[partition] = max(0, high - next)
            }
        }
        metrics.recordLag(lags)
        recordHoldings()
    }

    /// Where assigned partitions start: their stored offsets (others start from the group's offset).
    private func startOffsets(for partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        do {
            try checkpoints.waitUntilWritten()
        } catch {
            failure = error
        }
        let storedOffsets = checkpoints.storedOffsets
        var starts: [TopicPartition: Int64] = [:]
        for partition in partitions {
            if let offset = storedOffsets[PartitionKey(topic: partition.topic, partition: partition.partition)] {
                starts[partition] = offset
            }
        }
        logger.info("assigned \(partitions.count) partitions", metadata: ["resuming": "\(starts.count)"])
        return starts
    }

    /// Finishes the work in flight for partitions about to go, and forgets what is buffered for them (their
    /// next owner reads it again from the checkpoint).
    private func revoke(_ partitions: [TopicPartition], isLost: Bool) {
        logger.info("revoking \(partitions.count) partitions", metadata: ["lost": "\(isLost)"])
        // Deliver and persist what was applied (the group may refuse commits while it rebalances).
        do {
            try submitCheckpoint()
            try checkpoints.waitUntilWritten()
        } catch {
            failure = error
        }
        for partition in partitions { merge.removeAll(partition: partition.partition) }
    }

    /// Refuses to run unless every topic exists and both input topics have the same partition count.
    private func checkTopics(_ consumer: Consumer) throws(WorkerError) {
        let topics = configuration.topics
        var counts: [String: Int] = [:]
        for topic in [topics.positions, topics.commands, topics.events, topics.deadLetters] {
            do {
                counts[topic] = try consumer.partitionCount(topic: topic)
            } catch {
                throw WorkerError(.topics, "topic \(topic): \(error)")
            }
        }
        guard counts[topics.positions] == counts[topics.commands] else {
            throw WorkerError(
                .topics,
                "\(topics.positions) has \(counts[topics.positions]!) partitions and \(topics.commands) has "
                    + "\(counts[topics.commands]!): the input topics must be co-partitioned (same partition count, "
                    + "both keyed by deviceId)"
            )
        }
    }
}
