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
/// This file is the loop, the rebalance hooks and the checkpoint hand-off; docs/ARCHITECTURE.md draws the
/// whole. One loop, on the thread that calls ``run()``: poll a batch; merge each co-partitioned pair by
/// timestamp (``InputMerge``) and hand what the merges release to its device's shard (``DeviceShards``);
/// the shards apply their messages on their own threads and send the events and dead letters (offering the
/// events to live watchers, ``EventFeed``) while the loop polls and merges the next batches
/// (``ShardApplication``, at most four rounds ahead). To answer the operations endpoints' questions about its
/// devices (``DeviceQueries``) the loop waits until the shards have applied everything handed to them, the
/// one time the devices may be read without a lock.
/// Every ``WorkerConfiguration/checkpointInterval``, and before partitions are revoked or the worker stops,
/// the loop takes a checkpoint (what was sent, the changed devices, the next input offsets) and hands it to
/// the ``CheckpointWriter``, which waits for every record it covers to be delivered, sends the changed
/// devices to the changelog topic (``DeviceChangelog``) and waits for those, then writes the devices and
/// offsets in one SQLite transaction while the loop goes on; at each checkpoint the loop commits to the
/// consumer group the stored offsets it has not acknowledged yet. On assignment, partitions behind the
/// changelog are restored and each partition starts where no message is lost and none applied twice
/// (``PartitionHandover``), so partitions move between instances with their devices. A crash replays at most
/// what came after the last written checkpoint, re-emitting the same events with the same ids; a record the
/// broker refuses takes the worker back to that checkpoint in process (``CheckpointRewind``) and it retries
/// after a back-off.
/// Where the worker is in its life is ``WorkerLifecycle``'s to say.
public final class Worker: @unchecked Sendable {
    // @unchecked: all mutable state below is touched only by the thread in `run()` (the rebalance hooks run
    // inside `poll`, on that thread), except each shard's processor, which its apply thread has to itself
    // from an `application.start` until the next `application.finish` (see `ShardApplication`);
    // `stopRequested` is the one cross-thread value, and it is atomic.
    public let configuration: WorkerConfiguration
    private let logger: Logger
    private let stopRequested = Atomic<Bool>(false)
    /// Where the worker is in its life, for health and readiness probes.
    public let health = WorkerHealth()
    /// The events as they are sent, for live watchers (the operations page).
    public let feed: EventFeed
    /// The operations endpoints' questions about the devices held, answered by the loop.
    public let queries = DeviceQueries()
    private var lifecycle: WorkerLifecycle
    private var metrics: WorkerMetrics
    /// Replaced by the stored state when the worker rewinds after a refused delivery.
    private var shards: DeviceShards
    /// What the shards had counted before a rewind or an assignment replaced them (metrics only grow).
    private var countedByReplacedShards = ProcessingCounters()
    /// The shards' apply threads, and the offsets of what they applied.
    private let application: ShardApplication
    private var rewinder: CheckpointRewind
    /// Which partitions' devices are held, and how they arrive with an assignment (restored, loaded).
    private var handover: PartitionHandover
    /// The partition pairs' merges, and the next offsets of what they released since the last checkpoint.
    private var merge: InputMerge<ConsumerRecord>
    private let checkpoints: CheckpointWriter
    /// This process's claim on the state directory, for the worker's life.
    private let directoryLock: StateDirectoryLock
    /// The consumer, while ``run()`` has one: the revoke hook commits with it, the assign hook restores.
    private var hookConsumer: Consumer?
    /// Where checkpoints send changed devices, while ``run()`` has a producer; nil without a changelog.
    private var changelogSink: DeviceChangelog.Sink?
    /// How long a pair waits for a side that has given nothing since the assignment (see
    /// ``PartitionPairMerge``): long enough for a slow first fetch, bounded so that an unavailable partition
    /// does not stop its partner for ever.
    static let unfetchedSideWait: Duration = .seconds(30)

    /// Opens the state directory and loads the country index and every stored device.
    ///
    /// - Parameters:
    ///   - metricsFactory: where the metrics go. Default: the process's bootstrapped factory.
    ///   - feed: where sent events are offered to live watchers. Default: a feed of its own.
    /// - Throws: ``WorkerError`` when the state directory or the country data cannot be read.
    public init(
        configuration: WorkerConfiguration,
        logger: Logger = Logger(label: "geoworker"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        feed: EventFeed? = nil
    ) throws(WorkerError) {
        self.configuration = configuration
        self.logger = logger
        self.feed = feed ?? EventFeed(metricsFactory: metricsFactory)
        self.metrics = WorkerMetrics(factory: metricsFactory)
        self.lifecycle = WorkerLifecycle(
            backoff: .init(
                initial: configuration.deliveryRetry.initialBackoff,
                maximum: configuration.deliveryRetry.maximumBackoff
            )
        )
        self.merge = InputMerge(
            topics: configuration.topics,
            mergeWait: configuration.mergeWait,
            unfetchedSideWait: Self.unfetchedSideWait
        )
        let tracker: DeviceTracker
        do {
            tracker = DeviceTracker(
                configuration: configuration.tracker,
                countries: try CountryIndex.bundled(coastalTolerance: configuration.coastalTolerance),
                languages: try CountryLanguages.bundled()
            )
        } catch {
            throw WorkerError(.countries, "cannot read the bundled country data", underlying: error)
        }
        let store: StateStore
        do {
            directoryLock = try StateDirectoryLock(directory: configuration.stateDirectory)
            store = try StateStore(directory: configuration.stateDirectory)
            checkpoints = CheckpointWriter(store: store, storedOffsets: try store.loadOffsets())
        } catch {
            throw WorkerError(.state, "state directory \(configuration.stateDirectory)", underlying: error)
        }
        let routing = DeviceRouting(shardCount: max(1, configuration.applyThreads))
        application = ShardApplication(threadCount: routing.shardCount)
        rewinder = CheckpointRewind(store: store) { states in
            DeviceShards(states: states, routing: routing) {
                InputProcessor(
                    registry: DeviceRegistry(tracker: tracker, states: $0),
                    topics: configuration.topics,
                    deadLetterLimits: configuration.deadLetters
                )
            }
        }
        // Devices are loaded per partition as the group assigns them (``PartitionHandover``).
        shards = try rewinder.storedShards(partitions: [])
        handover = PartitionHandover(
            restore: configuration.changelog.enabled
                ? ChangelogRestore(
                    topic: configuration.changelogTopic,
                    store: store,
                    consumerConfiguration: KafkaClients.restoreConsumerConfiguration(configuration),
                    logger: logger,
                    metricsFactory: metricsFactory
                ) : nil,
            startWithoutProgress: KafkaClients.startWithoutProgress(configuration),
            logger: logger
        )
    }

    deinit {
        checkpoints.stop()
    }

    /// What has been processed so far (messages applied again after a rewind count again).
    public var counters: ProcessingCounters {
        var counters = countedByReplacedShards
        counters += shards.counters
        return counters
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
        do {
            try consumeUntilStopped()
        } catch {
            _ = lifecycle.failed(error)
            reportHealth()
            throw lifecycle.failure ?? error
        }
    }

    /// ``run()`` on a thread of its own (never on Swift's cooperative pool), suspending until it returns.
    public func run() async throws(WorkerError) {
        try await DedicatedThread.runOnce(name: "geoworker") { [self] () throws(WorkerError) in try run() }
    }

    private func consumeUntilStopped() throws(WorkerError) {
        var clients = try KafkaClients(
            configuration: configuration,
            rebalanceHandler: RebalanceHandler(
                onAssign: { [unowned self] partitions in takeAssignment(partitions) },
                onRevoke: { [unowned self] partitions, isLost in revoke(partitions, isLost: isLost) }
            ),
            logger: logger
        )
        hookConsumer = clients.consumer
        updateChangelogSink(clients.changelogProducer)
        defer {
            // A failure can leave the loop while the shards apply: they finish before the clients go, and the
            // consumer's messages they applied are let go.
            application.finish()
            clients.close()
            hookConsumer = nil
            changelogSink = nil
        }
        let consumer = clients.consumer
        let holdings = shards.holdings
        metrics.recordHoldings(holdings)
        if stopRequested.load(ordering: .acquiring) { _ = lifecycle.stopRequested() }
        var next = lifecycle.clientsReady()
        reportHealth()
        logger.info(
            "geoworker running",
            metadata: [
                "brokers": "\(configuration.brokers)", "group": "\(configuration.groupID)",
                "positions": "\(configuration.topics.positions)", "commands": "\(configuration.topics.commands)",
                "events": "\(configuration.topics.events)", "devices": "\(holdings.devices)",
                "applyThreads": "\(shards.count)",
            ]
        )

        let clock = ContinuousClock()
        var lastCheckpoint = clock.now
        var firstMessage: ContinuousClock.Instant?
        var writes = checkpoints.writes
        loop: while true {
            switch next {
            case .consume:
                break
            case .rewindAndWait(let reason, let refusals, let delay):
                try rewind(&clients, after: reason, refusals: refusals, delay: delay)
                updateChangelogSink(clients.changelogProducer)
                next = waitOutBackoff(clock)
                if case .consume = next { resume(consumer) }
                continue loop
            case .finish, .fail, .none:
                break loop
            }
            let batch: ConsumerBatch
            do {
                batch = try consumer.poll(maxMessages: configuration.maximumBatch, timeout: .milliseconds(100))
            } catch {
                throw WorkerError(.kafka, "consumer failed", underlying: error)
            }
            // A rebalance hook inside the poll, or the checkpoint thread, may have met a failure.
            if let failure = lifecycle.failure { throw failure }
            if let failure = checkpoints.failed {
                next = try refused(failure, now: clock.now)
                continue loop
            }
            let batchStart = clock.now
            if firstMessage == nil && !batch.isEmpty { firstMessage = batchStart }
            // Merged while the shards apply the previous batch.
            for record in batch {
                merge.append(record, kind: record.topic == configuration.topics.commands ? .commands : .positions)
            }
            merge.release(atEnd: consumer.partitionsAtEnd, now: clock.now, into: &shards) {
                shards,
                record,
                kind,
                origin in
                shards.enqueue(record, kind: kind, origin: origin)
            }
            for took in application.takeRoundDurations() { metrics.recordBatch(took) }
            // The shards stop for a checkpoint: it takes what they changed.
            let checkpointDue = clock.now - lastCheckpoint >= configuration.checkpointInterval
            if checkpointDue { application.finish() }
            // Their counters are read only while they are still: whenever they are (a steady stream leaves them
            // idle between polls), and at every checkpoint (a catch-up keeps them busy).
            if checkpointDue || application.hasFinished { metrics.publish(counters) }

            if checkpointDue {
                do {
                    try checkpoint(consumer)
                } catch {
                    next = try refused(error, now: clock.now)
                    continue loop
                }
                lastCheckpoint = clock.now
                if checkpoints.writes != writes {
                    writes = checkpoints.writes
                    lifecycle.checkpointWritten()
                }
            }
            if queries.hasPending {
                application.finish()
                queries.answerPending {
                    shards.answer($0, held: handover.held, inputPartitionCount: clients.inputPartitionCount)
                }
            }
            if stopRequested.load(ordering: .acquiring) {
                next = lifecycle.stopRequested()
            } else if configuration.untilCaughtUp && merge.isEmpty && consumer.hasReachedEndOfAssignment {
                next = lifecycle.caughtUp()
            }
            reportHealth()
            startApplying(clients.producer, polledAt: batchStart)
        }
        guard case .finish(let caughtUp) = next else { return }
        // What the last poll released (started at the end of the last round) is applied before the last
        // checkpoint.
        application.finish()
        do {
            try checkpoint(consumer)
            try checkpoints.waitUntilWritten()
        } catch  where error.code == .delivery {
            // No going back while stopping: the stored state stays as it was, and a restart replays the rest.
            logger.warning("stopping with records the broker refused; the state stays as last stored: \(error)")
            _ = lifecycle.deliveryRefused(error, now: clock.now)
        }
        commitStoredOffsets(of: consumer.assignment, consumer, waitForAnswer: true)
        lifecycle.finished()
        reportHealth()
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
        logger.info("geoworker stopped", metadata: ["devices": "\(shards.holdings.devices)"])
    }

    /// Hands what the merges released since the last start to the shards' threads.
    private func startApplying(_ producer: Producer, polledAt: ContinuousClock.Instant) {
        application.start(
            &shards,
            releasedOffsets: merge.takeOffsets(),
            polledAt: polledAt,
            producer: producer,
            feed: feed
        )
    }

    /// Where checkpoints send changed devices: the changelog's own producer, when there is a changelog.
    private func updateChangelogSink(_ producer: Producer?) {
        changelogSink = producer.map { DeviceChangelog.Sink(topic: configuration.changelogTopic, producer: $0) }
    }

    /// Tells the probes where the worker is, and why it is unhealthy when it is (a refusal, a failure).
    private func reportHealth() {
        health.enter(lifecycle.phase, reason: lifecycle.reason)
    }

    // MARK: A refused delivery: rewind and back off

    /// What to do about a failure met by a checkpoint: a refused delivery rewinds and backs off; anything
    /// else stops the worker (thrown).
    private func refused(
        _ error: WorkerError,
        now: ContinuousClock.Instant
    ) throws(WorkerError) -> WorkerLifecycle.Action {
        guard error.code == .delivery else { throw error }
        return lifecycle.deliveryRefused(error, now: now)
    }

    /// Takes the worker back to its last written checkpoint (``CheckpointRewind``), and says so.
    private func rewind(
        _ clients: inout KafkaClients,
        after error: WorkerError,
        refusals: Int,
        delay: Duration
    ) throws(WorkerError) {
        logger.error(
            "delivery refused; rewinding to the last checkpoint",
            metadata: ["error": "\(error)", "refusals": "\(refusals)", "retryIn": "\(delay)"]
        )
        reportHealth()
        if let refusal = error.underlying as? DeliveryRefusal { metrics.recordDeliveryFailures(refusal.counts) }
        // A failure found before the shards were waited for leaves a batch being applied: finish it first.
        application.finish()
        application.discardApplied()
        countedByReplacedShards += shards.counters
        shards = try rewinder.rewind(&clients, merge: &merge, checkpoints: checkpoints, partitions: handover.held)
    }

    /// Waits out the back-off without polling (the group keeps the member for `max.poll.interval.ms`, longer
    /// than the longest back-off); a stop request ends the wait at once.
    private func waitOutBackoff(_ clock: ContinuousClock) -> WorkerLifecycle.Action {
        while true {
            if stopRequested.load(ordering: .acquiring) { return lifecycle.stopRequested() }
            let next = lifecycle.backoffElapsed(now: clock.now)
            if case .consume = next { return next }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Reads again from where the rewind put the state.
    private func resume(_ consumer: Consumer) {
        do {
            try rewinder.resume(consumer)
        } catch {
            logger.warning("rewinding the read positions: \(error)")
        }
        reportHealth()
        logger.info("resuming after a refused delivery")
    }

    // MARK: Checkpoint hand-off

    /// Takes a checkpoint and hands it to the writer (which first finishes the previous one); commits what the
    /// store holds and the group does not yet; records lag and holdings.
    private func checkpoint(_ consumer: Consumer) throws(WorkerError) {
        try submitCheckpoint()
        let assigned = consumer.assignment
        commitStoredOffsets(of: assigned, consumer)
        metrics.recordLag(
            highWatermarks: consumer.cachedHighWatermarks(for: assigned),
            storedOffsets: checkpoints.storedOffsets
        )
        metrics.recordHoldings(shards.holdings)
    }

    private func submitCheckpoint() throws(WorkerError) {
        var taken = CheckpointWriter.Checkpoint(
            offsets: application.takeAppliedOffsets(),
            changelog: changelogSink
        )
        application.encodeChanges(of: shards)
        shards.takeCheckpoint(into: &taken)
        try checkpoints.submit(taken)
    }

    /// Commits to the consumer group, on the consumer's thread, the stored offset of each of `partitions` that
    /// the group has not acknowledged: for lag monitoring and as a fallback, since SQLite is the source of
    /// truth. Asked at every checkpoint, with or without new input, so a commit the group refused (while it
    /// rebalanced) or one that never came (a partition just assigned, with nothing new to read) is made good.
    /// Without `waitForAnswer` the commit goes out in the background and the loop does not wait a round trip.
    private func commitStoredOffsets(
        of partitions: some Sequence<TopicPartition>,
        _ consumer: Consumer,
        waitForAnswer: Bool = false
    ) {
        let stored = checkpoints.storedOffsets
        let acknowledged = consumer.acknowledgedCommits
        var offsets: [TopicPartition: Int64] = [:]
        for partition in partitions {
            if let offset = stored[partition], acknowledged[partition] != offset { offsets[partition] = offset }
        }
        guard !offsets.isEmpty else { return }
        do {
            if waitForAnswer {
                try consumer.commit(offsets)
            } else {
                try consumer.commitInBackground(offsets)
            }
        } catch {
            // The next checkpoint tries again; the group refuses commits while it rebalances.
            logger.debug("group offset commit deferred: \(error)")
        }
    }

    // MARK: Rebalance hooks (inside a poll, on the loop's thread)

    /// Takes an assignment (``PartitionHandover``): restores what is behind the changelog, loads the assigned
    /// partitions' devices, and returns where each partition starts. A failure (a changelog record that cannot
    /// be restored) stops the worker after this poll.
    private func takeAssignment(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        application.finish()
        do {
            try checkpoints.waitUntilWritten()
        } catch  where error.code != .delivery {
            _ = lifecycle.failed(error)
        } catch {
            // A refused delivery: the loop rewinds after this poll.
        }
        // Only a running worker takes an assignment; one that is starting or stopping (the consumer's close
        // serves a last rebalance) has no use for it.
        guard lifecycle.phase == .running, let consumer = hookConsumer else { return [:] }
        lifecycle.restoreStarted()
        reportHealth()
        let assignmentStart = ContinuousClock.now
        defer {
            lifecycle.restoreFinished()
            reportHealth()
        }
        do {
            let assignment = try handover.assign(
                partitions,
                consumer: consumer,
                storedOffsets: checkpoints.storedOffsets
            )
            if assignment.reloadDevices {
                countedByReplacedShards += shards.counters
                shards = try rewinder.storedShards(partitions: handover.held)
                metrics.recordHoldings(shards.holdings)
            }
            try checkpoints.advanceStoredOffsets(assignment.advanced)
            logger.info(
                "assigned \(partitions.count) partitions",
                metadata: [
                    "resuming": "\(assignment.resuming)",
                    "devices": "\(shards.holdings.devices)",
                    "restoredRecords": "\(assignment.restored.records.values.reduce(0, +))",
                    "elapsed": "\(ContinuousClock.now - assignmentStart)",
                ]
            )
            return assignment.starts
        } catch {
            _ = lifecycle.failed(error)
            return [:]
        }
    }

    /// Finishes the work in flight for partitions about to go, commits it to the group while the partitions
    /// are still this member's, and forgets what is buffered for them (their next owner reads it again from
    /// the checkpoint).
    private func revoke(_ partitions: [TopicPartition], isLost: Bool) {
        logger.info("revoking \(partitions.count) partitions", metadata: ["lost": "\(isLost)"])
        application.finish()
        do {
            try submitCheckpoint()
            try checkpoints.waitUntilWritten()
        } catch  where error.code != .delivery {
            _ = lifecycle.failed(error)
        } catch {
            // A refused delivery: the loop rewinds after this poll, to the state as last stored.
        }
        // Committed now, while the partitions are still this member's (the group may refuse it while it
        // rebalances; the stored offsets are what counts). Lost partitions are another member's already.
        if let hookConsumer, !isLost { commitStoredOffsets(of: partitions, hookConsumer, waitForAnswer: true) }
        for partition in partitions { merge.removeAll(partition: partition.partition) }
    }
}
