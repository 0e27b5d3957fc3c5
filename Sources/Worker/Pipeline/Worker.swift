import Foundation
import GeoCore
import Kafka
public import Logging
public import Metrics
import Synchronization
import Threads

/// The geoworker service: consumes positions and commands, applies them, publishes events, and persists
/// state and offsets so that a restart neither loses nor re-announces anything.
///
/// This type is the loop, a `switch` over the ``WorkerLifecycle``'s answers to what just happened;
/// docs/ARCHITECTURE.md follows one position through it. Each round polls (the ``RebalanceCoordinator``'s hooks
/// run inside), notes reads in the ``OffsetLedger``, merges (``InputMerge``) and queues for the shards
/// (``ShardedDevices``), takes a checkpoint when due (``CheckpointCoordinator``), and hands the round to the
/// ``ApplyThreads``. A refused delivery goes to ``DeliveryRecovery``; ``WorkerAssembly`` wires the parts.
public final class Worker: @unchecked Sendable {
    // @unchecked: everything below is the loop thread's (the rebalance hooks run inside its poll), but the
    // atomic `stopRequested`, the thread-safe `health`, `feed` and `queries`, and what the apply threads have
    // to themselves between an `ApplyThreads.start` and the next `finish`.
    public let configuration: WorkerConfiguration
    private let logger: Logger
    private let clock: any WorkerClock
    private let stopRequested = Atomic<Bool>(false)
    /// Where the worker is in its life, for health and readiness probes.
    public let health = WorkerHealth()
    /// The events as they are sent, for live watchers (the operations page).
    public let feed: EventFeed
    /// The operations endpoints' questions about the devices held, answered by the loop.
    public let queries = DeviceQueries()
    private let parts: WorkerAssembly
    private var merge: InputMerge<ConsumerRecord>
    private var metrics: WorkerMetrics

    /// Opens the state directory and loads the country index; devices are loaded as partitions are assigned.
    ///
    /// - Parameters:
    ///   - configuration: the worker's settings.
    ///   - logger: where the worker logs.
    ///   - metricsFactory: where the metrics go. Default: the process's bootstrapped factory.
    ///   - feed: where sent events are offered to live watchers. Default: a feed of its own.
    ///   - clock: when checkpoints fall due and back-offs end. Default: the system's monotonic clock.
    /// - Throws: ``WorkerError`` when the state directory or the country data cannot be read.
    public init(
        configuration: WorkerConfiguration,
        logger: Logger = Logger(label: "geoworker"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        feed: EventFeed? = nil,
        clock: any WorkerClock = SystemClock()
    ) throws(WorkerError) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.feed = feed ?? EventFeed(metricsFactory: metricsFactory)
        metrics = WorkerMetrics(factory: metricsFactory)
        merge = InputMerge(topics: configuration.topics, mergeWait: configuration.mergeWait)
        parts = try WorkerAssembly(configuration, health: health, logger: logger, metricsFactory: metricsFactory)
    }

    deinit {
        parts.checkpoints.stop()
    }

    /// What has been processed so far (messages applied again after a rewind count again).
    public var counters: ProcessingCounters { parts.devices.counters }

    /// Asks ``run()`` to finish: it completes the batch in flight, checkpoints, leaves the group and returns.
    ///
    /// Safe from any thread (a signal handler's task, for example).
    public func stop() {
        stopRequested.store(true, ordering: .releasing)
    }

    private func isStopRequested() -> Bool { stopRequested.load(ordering: .acquiring) }

    /// Runs until ``stop()`` (or, with ``WorkerConfiguration/untilCaughtUp``, until every assigned partition has been
    /// processed to its end).
    ///
    /// Blocks the calling thread: give it a thread of its own.
    ///
    /// - Throws: ``WorkerError`` when the topics are missing or not co-partitioned, Kafka fails for good, or
    ///   the state cannot be written. What was checkpointed stays valid; a restart resumes from there.
    @available(*, noasync, message: "blocks the calling thread for the worker's lifetime; use the async run")
    public func run() throws(WorkerError) {
        do {
            try consumeUntilStopped()
        } catch {
            // The first failure is the one reported: one met inside a rebalance hook came first.
            if case .fail(let first) = parts.lifecycle.report({ $0.failed(error) }) { throw first }
            throw error
        }
    }

    /// ``run()`` on a thread of its own (never on Swift's cooperative pool), suspending until it returns.
    public func run() async throws(WorkerError) {
        try await DedicatedThread.runOnce(name: "geoworker") { [self] () throws(WorkerError) in try run() }
    }

    private func consumeUntilStopped() throws(WorkerError) {
        guard let connection = try parts.connect(logger: logger, clock: clock, unless: isStopRequested) else { return }
        defer {
            // A failure can leave the loop while the shards apply: they finish before the clients go.
            parts.applyThreads.finish()
            connection.close()
        }
        let lifecycle = parts.lifecycle
        var next = lifecycle.report { $0.clientsReady(stopRequested: isStopRequested()) }
        logger.info("geoworker running", metadata: configuration.summary)
        var pace = Pace(lastCheckpoint: clock.now)
        while true {
            switch next {
            case .consume:
                next = consumeOnce(connection, pace: &pace)
            case .rewind(let reason, let refusals, let delay):
                next = try parts.recovery.recover(
                    after: reason,
                    refusals: refusals,
                    delay: delay,
                    on: connection,
                    merge: &merge,
                    lifecycle: lifecycle,
                    clock: clock,
                    stopRequested: isStopRequested
                )
            case .finish(let caughtUp):
                next = finish(connection, caughtUp: caughtUp, firstMessage: pace.firstMessage)
            case .exit:
                return
            case .fail(let error):
                throw error
            case .restore, .ignoreAssignment, .connect, .backOff, .none:
                preconditionFailure("the loop was given \(next), which only a hook or the recovery takes")
            }
        }
    }

    /// One round: poll (the rebalance hooks inside), merge and route while the shards apply the previous
    /// rounds, checkpoint when due, answer the operations endpoints, hand the round to the shards.
    private func consumeOnce(_ connection: WorkerAssembly.Connection, pace: inout Pace) -> WorkerLifecycle.Action {
        let (lifecycle, consumer, clients) = (parts.lifecycle, connection.consumer, connection.clients)
        let batch: ConsumerBatch
        do {
            batch = try consumer.poll(maxMessages: configuration.maxBatch, timeout: .milliseconds(100))
        } catch { return lifecycle.report { $0.failed(WorkerError(.kafka, "consumer failed", underlying: error)) } }
        // A rebalance hook inside the poll, or the checkpoint thread, may have met a failure.
        let afterPoll = lifecycle.report { $0.polled(now: clock.now) }
        guard afterPoll == .consume else { return afterPoll }
        if let failure = parts.checkpoints.failure {
            return lifecycle.report { $0.checkpointFailed(failure, now: clock.now) }
        }
        for partition in connection.group.takeRevoked() { merge.removeAll(partition: partition) }
        let polledAt = clock.now
        if pace.firstMessage == nil && !batch.isEmpty { pace.firstMessage = polledAt }
        let ledger = parts.ledger
        for record in batch {
            let kind: InputKind = record.topic == configuration.topics.commands ? .commands : .positions
            ledger.noteRead(partition: record.partition, kind: kind, offset: record.offset)
            merge.append(record, kind: kind)
        }
        merge.release(
            atEnd: consumer.endOffsets,
            highWatermark: consumer.cachedHighWatermark(of:),
            now: polledAt,
            into: &parts.devices.shards
        ) { $0.enqueue($1, kind: $2, origin: $3) }
        if metrics.recordLaggingWaits(merge.laggingWaitsGivenUp) { logger.warning("\(merge.laggingWaitWarning)") }
        parts.invariants.report(.readOrder, parts.ledger.takeReadOrderBreaches())
        parts.invariants.report(.mergeOrder, merge.takeOrderBreaches())
        for round in parts.applyThreads.takeAppliedRounds() {
            ledger.noteApplied(throughRound: round.number)
            if let duration = round.duration { metrics.recordBatch(duration) }
        }
        // The counters are read only while the shards are still: whenever they are (a steady stream leaves
        // them idle between polls), and at every checkpoint (which stops them; a catch-up keeps them busy).
        let checkpointDue = parts.checkpoints.isDue(at: clock.now, since: pace.lastCheckpoint)
        if checkpointDue {
            parts.applyThreads.finish()
            metrics.publish(counters)
            do {
                let wrote = try parts.checkpoints.checkpoint(changelog: clients.changelogSink, consumer: consumer)
                pace.lastCheckpoint = clock.now
                if wrote {
                    let afterWrite = lifecycle.report { $0.checkpointWritten() }
                    guard afterWrite == .consume else { return afterWrite }
                }
            } catch {
                return lifecycle.report { $0.checkpointFailed(error, now: clock.now) }
            }
        } else if parts.applyThreads.hasFinished {
            metrics.publish(counters)
        }
        if queries.hasPending {
            parts.applyThreads.finish()
            parts.devices.answer(queries, inputPartitionCount: clients.inputPartitionCount)
        }
        var next = WorkerLifecycle.Action.consume
        if isStopRequested() {
            next = lifecycle.report { $0.stopRequested() }
        } else if configuration.untilCaughtUp && merge.isEmpty && consumer.hasReachedEndOfAssignment {
            next = lifecycle.report { $0.caughtUp() }
        }
        let round = parts.applyThreads.start(
            &parts.devices.shards,
            polledAt: polledAt,
            producer: clients.producer,
            feed: feed
        )
        ledger.noteReleased(merge.takeReleasedOffsets(), inRound: round)
        return next
    }

    /// The last checkpoint, with what the last poll released applied first; the group's offsets committed,
    /// waiting for the answer; the run summed up.
    private func finish(
        _ connection: WorkerAssembly.Connection,
        caughtUp: Bool,
        firstMessage: ContinuousClock.Instant?
    ) -> WorkerLifecycle.Action {
        let (lifecycle, consumer, clients) = (parts.lifecycle, connection.consumer, connection.clients)
        do {
            try parts.checkpoints.submit(changelog: clients.changelogSink, consumer: consumer)
            try parts.checkpoints.waitUntilWritten()
        } catch {
            // A catch-up run goes back and retries (it ends well only with everything delivered); a failure is final.
            let afterFailure = lifecycle.report { $0.checkpointFailed(error, now: clock.now) }
            if case .fail = afterFailure { return afterFailure }
            if case .rewind = afterFailure { return afterFailure }
            // No going back while stopping: the stored state stays as it was, and a restart replays the rest.
            logger.warning("stopping with the last checkpoint not written; the state stays as last stored: \(error)")
        }
        parts.checkpoints.commitStored(of: consumer.assignment, consumer: consumer, waitForAnswer: true)
        if caughtUp {
            // From the first message to the last checkpoint: what replays and benchmarks want to know.
            let counters = counters
            logger.info(
                "caught up with every assigned partition",
                metadata: [
                    ServiceLogKey.positions: "\(counters.positions)", ServiceLogKey.commands: "\(counters.commands)",
                    ServiceLogKey.elapsed: "\(firstMessage.map { clock.now - $0 } ?? .zero)",
                ]
            )
        }
        logger.info("geoworker stopped", metadata: [ServiceLogKey.devices: "\(parts.devices.holdings.devices)"])
        return lifecycle.report { $0.finished() }
    }
}
