public import Addresses
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
/// This type is the loop, a `switch` over the ``WorkerLifecycle``'s answers to what just happened, and the one
/// owner of the worker's parts (``WorkerAssembly``); docs/ARCHITECTURE.md follows one position through it. Each
/// round polls (the rebalance hooks, `Worker+Rebalance.swift`, run inside), notes reads in the ``OffsetLedger``,
/// merges (``InputMerge``) and queues for the shards (``ShardedDevices``), gives the checkpoints their turn
/// (``Checkpointing``, `Worker+Checkpoint.swift`), and hands the round to the ``ApplyThreads``. A refused
/// checkpoint rewinds (`Worker+Rewind.swift`). What the input's progress is, and the order of the steps that move it at
/// each of these moments, is the ``Checkpointing``'s alone.
public final class Worker: @unchecked Sendable {
    // @unchecked: everything below is the loop thread's (the rebalance hooks run inside its poll), but the
    // `stopRequest`, the thread-safe `health`, `feed`, `queries` and `assignment`, and what the apply threads have
    // to themselves between an `ApplyThreads.start` and the next `finish`.
    public let configuration: WorkerConfiguration
    let logger: Logger
    let clock: any WorkerClock
    /// Asked by ``stop()`` (and ``cancel()``), read by the loop at every turn; it ends a back-off's wait.
    let stopRequest = StopRequest()
    /// Set by ``cancel()``: the stop gives up its waits.
    let waitsAbandoned = Atomic<Bool>(false)
    /// Where the worker is in its life, for health and readiness probes.
    public let health = WorkerHealth()
    /// The events as they are sent, for live watchers (the operations page).
    public let feed: EventFeed
    /// The operations endpoints' questions about the devices held, answered by the loop.
    public let queries = DeviceQueries()
    /// The input partitions this instance holds, for its group's directory (``GroupPresence``).
    public let assignment = AssignedPartitions()
    let parts: WorkerAssembly
    var merge: InputMerge<ConsumerRecord>
    /// Asks the brokers where partitions end when the merge needs it.
    let endQuestions: EndQuestions
    /// Asks where the fleet catalog's partitions end, when the catalog holds records back; nil without a catalog.
    let catalogEndQuestions: EndQuestions?
    var metrics: WorkerMetrics
    var deadLetterLog = DeadLetterLog()
    /// Until the run says it caught up: a stop before the clients are even connected ends a catch-up too.
    private let interruptedCatchUp: Mutex<Bool>

    /// Whether a run with ``WorkerConfiguration/untilCaughtUp`` ended before it caught up (stopped on request): what
    /// it stored stands, but the input is not all applied, which the process's exit status says.
    public var stoppedBeforeCaughtUp: Bool { interruptedCatchUp.withLock { $0 } }

    /// Notes how a run ended: before catching up, when it was asked to catch up.
    func noteFinished(caughtUp: Bool) {
        interruptedCatchUp.withLock { $0 = configuration.untilCaughtUp && !caughtUp }
    }

    /// Opens the state directory and loads the country index; devices are loaded as partitions are assigned.
    ///
    /// - Parameters:
    ///   - configuration: the worker's settings.
    ///   - logger: where the worker logs.
    ///   - metricsFactory: where the metrics go. Default: the process's bootstrapped factory.
    ///   - feed: where sent events are offered to live watchers. Default: a feed of its own.
    ///   - clock: when checkpoints fall due and back-offs end. Default: the system's monotonic clock.
    ///   - addressPrefetch: the street addresses' lookups, told of every fix applied (`address.prefetch`): they ask
    ///     for the address of a bucket a fix entered. Default: none.
    /// - Throws: ``WorkerError`` when the state directory or the country data cannot be read.
    public init(
        configuration: WorkerConfiguration,
        logger: Logger = Logger(label: "geoworker"),
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        feed: EventFeed? = nil,
        clock: any WorkerClock = SystemClock(),
        addressPrefetch: (any AddressPrefetching)? = nil
    ) throws(WorkerError) {
        self.configuration = configuration
        self.logger = logger
        self.clock = clock
        self.feed = feed ?? EventFeed(metricsFactory: metricsFactory)
        metrics = WorkerMetrics(factory: metricsFactory)
        interruptedCatchUp = Mutex(configuration.untilCaughtUp)
        merge = InputMerge(topics: configuration.topics, mergeWait: configuration.mergeWait)
        endQuestions = EndQuestions(
            configuration: KafkaClients.endsConsumerConfiguration(configuration),
            logger: logger
        )
        catalogEndQuestions =
            configuration.catalog.enabled
            ? EndQuestions(configuration: KafkaClients.catalogConsumerConfiguration(configuration), logger: logger)
            : nil
        parts = try WorkerAssembly(
            configuration,
            health: health,
            logger: logger,
            metricsFactory: metricsFactory,
            clock: clock,
            addressPrefetch: addressPrefetch
        )
    }

    /// What has been processed so far (messages applied again after a rewind count again): safe to read from any thread
    /// while the worker runs; each apply thread adds its part of a round when it is done with it.
    public var counters: ProcessingCounters { parts.devices.tally.counters }

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
    ///
    /// Cancelling the awaiting task is a stop past its deadline: the worker stops at once (``cancel()``), and this
    /// waits at most `grace` more for its loop, which gives up its waits but may be inside a call to Kafka or the disk
    /// that cannot be cut short. The store holds whole checkpoints only, so a restart replays what the stop left.
    ///
    /// - Throws: ``WorkerError`` as ``run()`` does; `shutdown` when the stop was cancelled, whether the loop then
    ///   returned in time or was left to end with the process.
    public func run(graceAfterCancel grace: Duration = .seconds(3)) async throws(WorkerError) {
        let loop: @Sendable () throws(WorkerError) -> Void = { [self] () throws(WorkerError) in try run() }
        let returned: Void? = try await DedicatedThread.runOnce(
            name: "geoworker",
            onCancel: { [self] in cancel() },
            abandoningAfter: grace,
            loop
        )
        guard areWaitsAbandoned() else { return }
        if returned == nil {
            throw WorkerError(
                .shutdown,
                "the stop gave up at its deadline, and the worker's loop was still in a call to Kafka or the disk "
                    + "\(grace) later: left to end with the process; a restart resumes from the last checkpoint stored"
            )
        }
        throw WorkerError(
            .shutdown,
            "the stop gave up at its deadline without its last checkpoint or commit; a restart resumes from the last "
                + "checkpoint stored"
        )
    }

    private func consumeUntilStopped() throws(WorkerError) {
        guard let connection = try parts.connect(logger: logger, clock: clock, unless: stopRequest) else { return }
        defer {
            // A failure can leave the loop while the shards apply: they finish before the clients go.
            waitUntilApplied()
            leave(connection)
        }
        let lifecycle = parts.lifecycle
        var next = lifecycle.report { $0.clientsReady(stopRequested: isStopRequested()) }
        logger.info("geoworker running", metadata: configuration.summary)
        var firstMessage: ContinuousClock.Instant?
        while true {
            switch next {
            case .consume:
                next = consumeOnce(connection, firstMessage: &firstMessage)
            case .rewind(let reason, let refusals, let delay):
                next = try rewind(after: reason, refusals: refusals, delay: delay, on: connection)
            case .finish(let caughtUp):
                next = finish(connection, caughtUp: caughtUp, firstMessage: firstMessage)
            case .exit:
                return
            case .fail(let error):
                throw error
            case .restore, .ignoreAssignment, .connect, .backOff, .nothing:
                preconditionFailure("the loop was given \(next), which only a hook or the recovery takes")
            }
        }
    }

    /// One round: poll (the rebalance hooks inside), merge and route while the shards apply the previous
    /// rounds, carry out the checkpoint's turn, answer the operations endpoints, hand the round to the shards.
    private func consumeOnce(
        _ connection: WorkerAssembly.Connection,
        firstMessage: inout ContinuousClock.Instant?
    ) -> WorkerLifecycle.Action {
        let (lifecycle, consumer, clients) = (parts.lifecycle, connection.consumer, connection.clients)
        let batch: ConsumerBatch
        do {
            batch = try consumer.poll(
                maxMessages: configuration.maxBatch,
                timeout: .milliseconds(100),
                onAssign: { assign($0, connection) },
                onRevoke: { revoke($0, isLost: $1, connection) }
            )
        } catch { return lifecycle.report { $0.failed(WorkerError(.kafka, "consumer failed", underlying: error)) } }
        // A rebalance hook inside the poll may have met a failure or lost the partitions.
        let afterPoll = lifecycle.report { $0.polled(now: clock.now) }
        guard afterPoll == .consume else { return dropping(batch, afterPoll) }
        let afterAnswer = parts.progress.takeAnswer()
        guard afterAnswer == .consume else { return dropping(batch, afterAnswer) }
        let polledAt = clock.now
        if firstMessage == nil && !batch.isEmpty { firstMessage = polledAt }
        if let catalogFeed = connection.catalogFeed { catalogTurn(catalogFeed, producer: clients.producer) }
        let progress = parts.progress
        merge.polled()
        for record in batch {
            let kind = inputKind(of: record)
            progress.noteRead(partition: record.partition, kind: kind, offset: record.offset)
            merge.append(record, kind: kind)
        }
        releaseMerged(consumer, catalog: connection.catalogFeed, now: polledAt)
        if metrics.recordLaggingWaits(merge.laggingWaitsGivenUp) { logger.warning("\(merge.laggingWaitWarning)") }
        parts.invariants.report(.readOrder, progress.takeReadOrderBreaches())
        parts.invariants.report(.mergeOrder, merge.takeOrderBreaches())
        noteAppliedRounds()
        checkpointTurn(connection)
        if queries.hasPending {
            waitUntilApplied()
            parts.devices.answer(queries, inputPartitionCount: clients.inputPartitionCount, catalog: parts.catalog)
        }
        var next = WorkerLifecycle.Action.consume
        if isStopRequested() {
            next = lifecycle.report { $0.stopRequested() }
        } else if configuration.untilCaughtUp && merge.isEmpty && consumer.hasReachedEndOfAssignment {
            next = lifecycle.report { $0.caughtUp() }
        }
        var streamAdvances = merge.takeStreamAdvances()
        if let idleAfter = configuration.idlePartitionWait {
            streamAdvances += merge.idleStreamAdvances(
                partitions: parts.devices.partitions,
                atEnd: { consumer.partitionsAtEnd },
                now: polledAt,
                wallTime: { clock.wallMilliseconds },
                idleAfter: idleAfter
            )
        }
        let round = parts.applyThreads.start(
            &parts.devices.shards,
            polledAt: polledAt,
            streamAdvances: streamAdvances,
            producer: clients.producer,
            feed: feed
        )
        progress.noteReleased(merge.takeReleasedOffsets(), inRound: round)
        return next
    }

    /// Hands the shards what the merge releases, after taking the brokers' answer about partitions' ends if one came;
    /// asks about the ends that held a side back without being known to cover its records (``EndConfirmations``), and
    /// about the catalog's when it held records back (``CatalogGate``).
    private func releaseMerged(_ consumer: Consumer, catalog: CatalogFeed?, now: ContinuousClock.Instant) {
        if let answer = endQuestions.takeAnswer() {
            merge.confirmEnds(answer.ends, askedAfterPoll: answer.askedAfterPoll, readTo: consumer.endOffsets)
        }
        if let catalog, let answer = catalogEndQuestions?.takeAnswer() { catalog.confirmEnds(answer) }
        merge.release(
            atEnd: consumer.endOffsets,
            highWatermark: consumer.cachedHighWatermark(of:),
            now: now,
            catalog: catalog?.gate ?? .open,
            into: &parts.devices.shards
        ) { $0.enqueue($1, kind: $2, origin: $3, streamTime: $4) }
        endQuestions.ask(merge.takeUnconfirmedEnds(), afterPoll: merge.poll, waking: consumer)
        if let catalog {
            let held = merge.takeCatalogHeld()
            catalog.noteHeld(held, now: now)
            if held { catalogEndQuestions?.ask(Set(catalog.partitions), afterPoll: merge.poll, waking: consumer) }
        }
    }

    /// Applies the catalog's changes that came since the last round.
    ///
    /// Only once the apply threads have applied what they were handed: they read the catalog without a lock. A change
    /// is in force from its message time, so a position stamped after it that is applied later sees it, whenever it
    /// was read.
    private func catalogTurn(_ feed: CatalogFeed, producer: Producer) {
        let changes = feed.takeChanges()
        let deadLetters = feed.takeDeadLetters()
        // Not awaited: a catalog record is no input offset a checkpoint waits for; the producer logs a refusal.
        if !deadLetters.isEmpty { _ = producer.send(deadLetters) }
        let now = clock.now
        guard !changes.isEmpty || feed.wantsForgetting(now: now) else { return }
        waitUntilApplied()
        feed.apply(changes, released: merge.newestReleased, now: now)
    }

    /// A batch the loop does not apply (a refusal or a loss ended its poll: the loop rewinds, fails or stops) still moved
    /// the consumer past it: its reads are noted, so that a rewind takes a partition it began back before it.
    private func dropping(_ batch: ConsumerBatch, _ action: WorkerLifecycle.Action) -> WorkerLifecycle.Action {
        for record in batch {
            parts.progress.noteRead(partition: record.partition, kind: inputKind(of: record), offset: record.offset)
        }
        return action
    }

    private func inputKind(of record: ConsumerRecord) -> InputKind {
        record.topic == configuration.topics.commands ? .commands : .positions
    }

    /// Waits until the apply threads have applied everything handed to them, and notes the rounds applied: what
    /// every checkpoint, rebalance, rewind, query and stop does first.
    func waitUntilApplied() {
        parts.applyThreads.waitUntilApplied()
        noteAppliedRounds()
    }

    /// Notes each round the apply threads applied since the last note, once: its offsets as applied (the next
    /// checkpoint may store them) and its duration in the batch-duration histogram.
    func noteAppliedRounds() {
        for round in parts.applyThreads.takeAppliedRounds() {
            parts.progress.noteApplied(throughRound: round.number)
            if let duration = round.duration { metrics.recordBatch(duration) }
        }
    }
}
