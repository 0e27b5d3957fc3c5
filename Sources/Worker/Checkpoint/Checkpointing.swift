import GeoCore
import Kafka
import Logging
import Metrics
import PartitionOffsets

/// The one owner of the worker's progress through its input and of the sequences that move it: a round's checkpoint,
/// an assignment, a revocation, a rewind and the stop.
///
/// It alone holds the ``OffsetLedger`` (each partition's offsets from read to committed), the ``CheckpointCycle``
/// (when a checkpoint is taken and what its answer means), the ``CheckpointWriter`` and its ``StoreBacklog`` (what the
/// changelog holds and the store does not yet). Each of the loop's moments is one method here, which carries out its
/// steps in their order:
///
/// | Moment | Steps, in order |
/// |---|---|
/// | a round (``turn(_:consumer:)``) | when a checkpoint is due: wait until applied, take it; under exactly-once wait for its transaction; commit the stored offsets to the group; record the lag |
/// | after the poll (``takeAnswer()``) | carry out the writer's answer; report a refusal (the loop rewinds) |
/// | before an assignment reads the store (``readyToReadStore(_:)``) | wait until applied; settle the checkpoint in hand; store the backlog |
/// | an assignment taken (``assignmentStarts(_:storing:)``) | store the starts the group moved past the store; note every start |
/// | a revocation (``revoke(_:isLost:source:consumer:)``) | wait until applied; settle; take a stored checkpoint and settle it; commit it to the group; forget the partitions' reads |
/// | a rewind (``rewind(_:)``) | wait until applied; settle; store the backlog, or drop it when the store refuses; forget what is not stored; the checkpoints writable again; where each partition reads again |
/// | the stop (``stop(_:keepWaiting:)``, ``commitStored(of:consumer:waitingUnless:)``) | wait until applied; settle; take a stored checkpoint and settle it; the cycle stopped; commit to the group |
///
/// So the rules the handover depends on hold by construction: the store is read only once it holds every checkpoint
/// written and the backlog (an assignment loads devices from it, a rewind goes back to it); a partition leaves only
/// after what was applied of it is stored; the group is sent only what the changelog covers.
///
/// The loop's parts that a checkpoint is taken from (the apply threads, the devices, the clients) stay the loop's: it
/// hands them over as a ``Source`` when a moment needs one. Owned by the loop's thread; the rebalance hooks run inside
/// its poll.
final class Checkpointing {
    /// What a checkpoint is taken from: the loop's devices and the clients it goes out through.
    struct Source {
        /// Waits until the apply threads have applied everything handed to them, their rounds noted as applied
        /// (``noteApplied(throughRound:)``): the first step of every moment but a round's turn with nothing due.
        var waitUntilApplied: () -> Void
        /// The shards' changes since the last checkpoint: every changed device's, or the eventful ones' only
        /// (`eventfulOnly`).
        var changes: (_ eventfulOnly: Bool) -> [DeviceShard.Changes]
        /// The partitions this instance holds.
        var assigned: Set<TopicPartition>
        /// Where the changed devices' records go; nil without a changelog.
        var changelog: DeviceChangelog.Sink?
        /// The group's membership check of a checkpoint that commits these offsets; nil when nobody asks.
        var membership: (_ confirming: [TopicPartition: Int64]) -> MembershipCheck?
        /// Under exactly-once, the open transaction.
        var transaction: CheckpointTransaction?
        /// How many devices and pins are held, for the gauges.
        var holdings: () -> (devices: Int, pins: Int)
        /// Whether the stop gave up its waits (``Worker/cancel()``): nothing more is taken.
        var waitsAbandoned: () -> Bool
    }

    private let ledger: OffsetLedger
    private var cycle: CheckpointCycle
    private let writer: CheckpointWriter
    /// What the changelog holds and the store does not: the writer's answers say what it is after each write.
    private var backlog = StoreBacklog()
    private var metrics: CheckpointMetrics
    private let lifecycle: PublishedLifecycle
    private let clock: any WorkerClock
    private let logger: Logger
    /// Counts the checkpoints the disk refused.
    private let stateWriteFailures: Counter
    /// Whether the group is sent the stored offsets; under exactly-once each transaction commits them instead, and the
    /// store, which lags them, would move them back.
    private let commitsToGroup: Bool

    init(
        ledger: OffsetLedger,
        cycle: CheckpointCycle,
        writer: CheckpointWriter,
        metrics: CheckpointMetrics,
        lifecycle: PublishedLifecycle,
        clock: any WorkerClock,
        logger: Logger,
        stateWriteFailures: Counter,
        commitsToGroup: Bool
    ) {
        self.ledger = ledger
        self.cycle = cycle
        self.writer = writer
        self.metrics = metrics
        self.lifecycle = lifecycle
        self.clock = clock
        self.logger = logger
        self.stateWriteFailures = stateWriteFailures
        self.commitsToGroup = commitsToGroup
    }

    deinit {
        writer.stop()
    }

    // MARK: What the loop reads and applies

    /// A message was read (``OffsetLedger/noteRead(partition:kind:offset:)``).
    func noteRead(partition: Int32, kind: InputKind, offset: Int64) {
        ledger.noteRead(partition: partition, kind: kind, offset: offset)
    }

    /// Records read again or out of order since the last call.
    func takeReadOrderBreaches() -> BreachSample<String> { ledger.takeReadOrderBreaches() }

    /// The merge released messages up to these next offsets, handed to the apply threads as `round`.
    func noteReleased(_ offsets: [TopicPartition: Int64], inRound round: Int) {
        ledger.noteReleased(offsets, inRound: round)
    }

    /// The apply threads finished every round up to and including `round`.
    func noteApplied(throughRound round: Int) {
        ledger.noteApplied(throughRound: round)
    }

    /// The next offsets the store holds.
    var stored: [TopicPartition: Int64] { ledger.stored }

    /// The stored offsets of `partitions`.
    func stored(of partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        ledger.stored.filter { partitions.contains($0.key) }
    }

    // MARK: A round

    /// A round's checkpoint turn: when one is due it is taken and handed to the writer (under exactly-once its
    /// transaction ends before the apply threads send more: what they send next is the next one's), the group is sent
    /// the stored offsets it lacks, and lag and holdings are recorded.
    ///
    /// - Returns: whether a checkpoint was due.
    func turn(_ source: () -> Source, consumer: Consumer) -> Bool {
        guard cycle.turn(now: clock.now) == .take else { return false }
        let source = source()
        take(source)
        // The store is written meanwhile; a refusal is the answer's, taken after the next poll.
        if source.transaction != nil { writer.waitForDeliveries() }
        commitStored(of: source.assigned, consumer: consumer)
        metrics.recordLag(
            highWatermarks: consumer.cachedHighWatermarks(for: source.assigned),
            applied: ledger.latestApplied
        )
        metrics.recordHoldings(source.holdings())
        return true
    }

    /// Carries out the writer's answer if it has come, and reports a refusal to the lifecycle, which rewinds: whether
    /// it came now or to a rebalance hook inside the poll.
    ///
    /// - Returns: the lifecycle's answer: consume, rewind, or fail.
    func takeAnswer() -> WorkerLifecycle.Action {
        if let answer = writer.takeAnswer(), let failed = carryOut(cycle.answered(answer)) { return failed }
        if let refusal = cycle.refusal { return lifecycle.report { $0.checkpointFailed(refusal, now: clock.now) } }
        return .consume
    }

    // MARK: Partitions changing hands

    /// Before an assignment reads the store (where its partitions start, which devices are loaded): the checkpoint in
    /// hand written and the backlog stored.
    ///
    /// A refusal of either stays with the cycle: the assignment reads the store as it stands, which the loop rewinds to
    /// after the poll.
    ///
    /// - Returns: false when the store failed: the assignment is not taken, and the loop fails after the poll.
    func readyToReadStore(_ source: () -> Source) -> Bool {
        source().waitUntilApplied()
        return settle() == nil && storeBacklogFirst() == nil
    }

    /// An assignment starts its partitions at `starts`: those past the store (`storing`, the group's offsets after
    /// another instance processed them) are stored first, so that a rewind or a group commit never goes back before
    /// them.
    ///
    /// - Throws: a failure of the store; then no start is noted.
    func assignmentStarts(
        _ starts: [TopicPartition: Int64],
        storing advanced: [TopicPartition: Int64]
    )
        throws(WorkerError)
    {
        try writer.writeOffsets(advanced)
        ledger.noteStored(advanced)
        ledger.noteStarted(starts)
    }

    /// Partitions are revoked: unless lost, what was applied of them is checkpointed, stored and committed to the group
    /// while they are still this member's; then what was read of them is forgotten (their next owner, this instance
    /// again after an eager rebalance included, reads them again).
    ///
    /// Lost partitions are another member's already: what was applied since the last checkpoint is never written (a
    /// checkpoint in hand meets the ``MembershipCheck``), and the loop rewinds after the poll.
    ///
    /// - Returns: the partitions' stored offsets, where their next owner starts.
    func revoke(
        _ partitions: [TopicPartition],
        isLost: Bool,
        source: () -> Source,
        consumer: Consumer
    ) -> [TopicPartition: Int64] {
        if !isLost {
            // Refused, the loop rewinds after this poll, to the state as last stored; a failure is the lifecycle's.
            let source = source()
            source.waitUntilApplied()
            if settle() == nil {
                take(source, storing: true)
                _ = settle()
            }
            // The group may refuse the commit while it rebalances; the stored offsets are what counts.
            commitStored(of: partitions, consumer: consumer, waitingUnless: source.waitsAbandoned)
        }
        let stored = stored(of: partitions)
        for partition in partitions { ledger.forgetAssignment(partition: partition.partition) }
        return stored
    }

    // MARK: Going back, and the stop

    /// Goes back to the store, after a refusal or a loss: the checkpoint in hand ends (written, or refused by the
    /// group); what reached the changelog goes to the store first, so that going back repeats as little as it can (a
    /// store that refuses it is gone back to as it stands); what was released or applied and not stored is forgotten;
    /// checkpoints are taken again.
    ///
    /// The loop then puts its devices back as stored and seeks each partition to where this says.
    ///
    /// - Returns: where each assigned partition reads again (``OffsetLedger/rewindTargets(assigned:)``).
    /// - Throws: the store's failure.
    func rewind(_ source: () -> Source) throws(WorkerError) -> [TopicPartition: Int64] {
        let source = source()
        source.waitUntilApplied()
        if case .fail(let error)? = settle() { throw error }
        if case .fail(let error)? = storeBacklogFirst() { throw error }
        if cycle.hasBacklog {
            backlog = StoreBacklog()
            cycle.backlogDropped()
        }
        ledger.discardUnstored()
        cycle.rewound()
        return ledger.rewindTargets(assigned: source.assigned)
    }

    /// The stop's last checkpoint: the one in hand settled, one more taken and stored; the waits given up when
    /// `keepWaiting` says so (the stop cancelled), the cycle then stopped with the writer's answer not waited for.
    ///
    /// - Returns: consume to go on stopping; rewind for a catch-up run whose last checkpoint was refused (it ends well
    ///   only with everything delivered); fail.
    func stop(_ source: () -> Source, keepWaiting: () -> Bool) -> WorkerLifecycle.Action {
        let source = source()
        source.waitUntilApplied()
        if let failed = settle(while: keepWaiting) { return failed }
        take(source, storing: true)
        if let failed = settle(while: keepWaiting) { return failed }
        if let refusal = cycle.refusal {
            let afterRefusal = lifecycle.report { $0.checkpointFailed(refusal, now: clock.now) }
            if case .fail = afterRefusal { return afterRefusal }
            if case .rewind = afterRefusal { return afterRefusal }
            // No going back while stopping: the stored state stays as it was, and a restart replays the rest.
            logger.warning("stopping with the last checkpoint not written; the state stays as last stored: \(refusal)")
        }
        cycle.stopped()
        return .consume
    }

    /// Commits to the consumer group, on the consumer's thread, the logged offset of each of `partitions` that the
    /// group has not acknowledged: for lag monitoring and as a fallback, since the store and the changelog are the
    /// source of truth.
    ///
    /// Asked at every checkpoint, with or without new input, so a commit the group refused (while it rebalanced) or one
    /// that never came (a partition just assigned, with nothing new to read) is made good. Without `waitingUnless` the
    /// commit goes out in the background and the loop does not wait a round trip; with it, the loop waits for the
    /// answer until `waitingUnless` says the waits are given up (a stop past its deadline). Never under exactly-once.
    func commitStored(
        of partitions: some Sequence<TopicPartition>,
        consumer: Consumer,
        waitingUnless abandoned: (() -> Bool)? = nil
    ) {
        guard commitsToGroup else { return }
        let offsets = ledger.uncommitted(of: partitions, acknowledged: consumer.acknowledgedCommits)
        guard !offsets.isEmpty else { return }
        do {
            if let abandoned, !abandoned() {
                try consumer.commit(offsets, giveUpWhen: abandoned)
            } else {
                try consumer.commitInBackground(offsets)
            }
        } catch {
            // The next checkpoint tries again; the group refuses commits while it rebalances.
            logger.debug("group offset commit deferred", metadata: [ServiceLogKey.error: "\(error)"])
        }
    }

    // MARK: Steps

    /// Takes a checkpoint and hands it to the writer, when the cycle allows one.
    ///
    /// The writer must be free, nothing refused, the waits not given up. `storing`: the store must hold it (a
    /// revocation's, the last one).
    ///
    /// A complete checkpoint takes every changed device and the applied offsets; an eventful one the devices with an
    /// eventful change only, and leaves the offsets for the next complete one (``CheckpointCycle/Scope``).
    private func take(_ source: Source, storing: Bool = false) {
        guard cycle.canTake, !source.waitsAbandoned() else { return }
        let scope = cycle.scope(now: clock.now, storing: storing)
        let isComplete = scope != .eventful
        // The apply threads finish first: the offsets taken next are of the rounds they applied.
        source.waitUntilApplied()
        let shards = source.changes(!isComplete)
        let checkpoint = Checkpoint(
            shards: shards,
            offsets: isComplete ? ledger.takeApplied() : [:],
            isComplete: isComplete,
            changelog: source.changelog,
            membership: source.membership(ledger.confirmableOffsets(assigned: source.assigned)),
            transaction: source.transaction
        )
        switch cycle.taken(isEmpty: checkpoint.isEmpty, now: clock.now, scope: scope) {
        case .write(let storing): writer.write(checkpoint, storing: storing, backlog: backlog)
        case .upToDate: metrics.recordUpToDate()
        case .nothing: break
        case let step: preconditionFailure("a checkpoint taken, then \(step)")
        }
    }

    /// Waits for the checkpoint in hand, if any, as long as `keepWaiting` says, and carries out its answer; a refusal
    /// stays with the cycle for the loop to report after the poll.
    ///
    /// - Returns: the lifecycle's answer to a failure of the store; nil otherwise.
    private func settle(while keepWaiting: () -> Bool = { true }) -> WorkerLifecycle.Action? {
        guard cycle.settle() == .waitForWriter, let answer = writer.waitForAnswer(while: keepWaiting) else {
            return nil
        }
        return carryOut(cycle.answered(answer))
    }

    /// Before the store is read, the backlog written to it (``CheckpointCycle/storeNow()``); a refusal (the disk full)
    /// stays with the cycle.
    ///
    /// - Returns: the lifecycle's answer to a failure of the store; nil otherwise.
    private func storeBacklogFirst() -> WorkerLifecycle.Action? {
        guard cycle.storeNow() == .storeBacklog else { return nil }
        let result: Result<Void, WorkerError>
        do {
            ledger.noteStored(try writer.storeBacklog(backlog))
            backlog = StoreBacklog()
            result = .success(())
        } catch {
            result = .failure(error)
        }
        return carryOut(cycle.backlogStored(result, now: clock.now))
    }

    /// Carries out a step that follows the writer's answer: a written checkpoint's offsets noted as logged and stored,
    /// the backlog as it left it, the lifecycle told; or the store's failure reported.
    ///
    /// - Returns: the lifecycle's answer to a failure; nil otherwise.
    private func carryOut(_ step: CheckpointCycle.Step) -> WorkerLifecycle.Action? {
        switch step {
        case .nothing:
            return nil
        case .written(let written):
            if let failure = written.storeFailure {
                stateWriteFailures.increment()
                logger.warning(
                    "the transaction committed, the store could not be written; it is written with a later checkpoint",
                    metadata: [ServiceLogKey.error: "\(failure)"]
                )
            }
            backlog = written.backlog
            ledger.noteLogged(written.logged)
            if let stored = written.stored { ledger.noteStored(stored) }
            if written.isComplete { metrics.recordUpToDate() }
            _ = lifecycle.report { $0.checkpointWritten() }
            return nil
        case .fail(let error):
            return lifecycle.report { $0.failed(error) }
        case .take, .write, .upToDate, .waitForWriter, .storeBacklog:
            preconditionFailure("\(step) does not follow an answer")
        }
    }
}
