import Kafka
import Logging

/// Takes the worker's checkpoints and keeps the consumer group in step with them: stops the shards, takes a
/// ``Checkpoint`` whole (the shards' deliveries and changed devices, the applied offsets, the changelog),
/// hands it to the ``CheckpointWriter``, notes in the ``OffsetLedger`` what the writer stored, commits to the
/// group the stored offsets it lacks, and records lag and holdings.
///
/// Owned by the loop's thread (the rebalance hooks, inside the poll, call it too); the writing itself runs on
/// the writer's threads.
final class CheckpointCoordinator {
    private let writer: CheckpointWriter
    /// How often the loop takes a checkpoint, at most (``isDue(at:since:)``).
    private let interval: Duration
    private let ledger: OffsetLedger
    private let applyThreads: ApplyThreads
    private let devices: HeldDevices
    private var metrics: CheckpointMetrics
    private let logger: Logger
    /// Checkpoints written since ``checkpoint(changelog:consumer:)`` last said so.
    private var writtenSinceAsked = 0

    init(
        writer: CheckpointWriter,
        interval: Duration,
        ledger: OffsetLedger,
        applyThreads: ApplyThreads,
        devices: HeldDevices,
        metrics: CheckpointMetrics,
        logger: Logger
    ) {
        self.writer = writer
        self.interval = interval
        self.ledger = ledger
        self.applyThreads = applyThreads
        self.devices = devices
        self.metrics = metrics
        self.logger = logger
    }

    /// The regular checkpoint, taken when ``isDue(at:since:)``: takes one and hands it to the writer,
    /// commits what the store holds and the group does not yet, and records lag and holdings.
    ///
    /// - Returns: whether a checkpoint was written since the last call (deliveries go through).
    /// - Throws: the failure of an earlier checkpoint (a refused delivery, the store); this one is dropped.
    func checkpoint(changelog: DeviceChangelog.Sink?, consumer: Consumer) throws(WorkerError) -> Bool {
        try submit(changelog: changelog, consumer: consumer)
        let assigned = consumer.assignment
        commitStored(of: assigned, consumer: consumer)
        metrics.recordLag(highWatermarks: consumer.cachedHighWatermarks(for: assigned), stored: ledger.stored)
        metrics.recordHoldings(devices.holdings)
        collectWritten()
        defer { writtenSinceAsked = 0 }
        return writtenSinceAsked > 0
    }

    /// Stops the shards, takes a checkpoint and hands it to the writer (which first finishes the previous one).
    ///
    /// With a changelog, the writer asks the group through `consumer` whether the assigned partitions are still this
    /// instance's before it sends the checkpoint's changelog records (``MembershipCheck``).
    ///
    /// - Throws: the failure of an earlier checkpoint; this one is then dropped.
    func submit(changelog: DeviceChangelog.Sink?, consumer: Consumer) throws(WorkerError) {
        applyThreads.finish()
        for round in applyThreads.takeAppliedRounds() { ledger.noteApplied(throughRound: round.number) }
        let assigned = consumer.assignment
        let checkpoint = Checkpoint(
            shards: applyThreads.takeChanges(of: devices.shards),
            offsets: ledger.takeApplied(),
            changelog: changelog,
            membership: changelog == nil
                ? nil
                : MembershipCheck(consumer: consumer, storedOffsets: ledger.stored.filter { assigned.contains($0.key) })
        )
        defer { collectWritten() }
        let nothingToWrite = checkpoint.isEmpty
        try writer.submit(checkpoint)
        // Submitted after the previous one was written: with nothing new, the store holds everything applied.
        if nothingToWrite { metrics.recordUpToDate() }
    }

    /// Waits until every checkpoint submitted is written.
    ///
    /// - Throws: the failure that stopped the writing.
    func waitUntilWritten() throws(WorkerError) {
        defer { collectWritten() }
        try writer.waitUntilWritten()
    }

    /// Waits until the writer has nothing in hand, whether what it had was written or refused.
    ///
    /// - Throws: a final failure of the writing (the store).
    func waitUntilSettled() throws(WorkerError) {
        do {
            try waitUntilWritten()
        } catch  where error.isCheckpointRefusal {
            // Refused: nothing of it was written, and the rewind under way goes back to the store as it stands.
        }
    }

    /// The failure that stopped the writing, if any: a refusal until the worker rewinds, or a final failure.
    var failure: WorkerError? { writer.failed }

    /// Whether the loop takes a checkpoint at `now`.
    ///
    /// Once the interval has passed since the last one and the writer is done with it. While a checkpoint waits for
    /// its deliveries or for SQLite the loop consumes on and the changes gather for the next one: a slow disk or
    /// changelog delays checkpoints, never events (``CheckpointPipeline``).
    func isDue(at now: ContinuousClock.Instant, since last: ContinuousClock.Instant) -> Bool {
        now - last >= interval && !writer.isWriting
    }

    /// Writes the start offsets of an assignment that the group moved past the store, so that a rewind or a
    /// group commit never goes back before them.
    ///
    /// - Throws: a failure of the store.
    func storeStarts(_ offsets: [TopicPartition: Int64]) throws(WorkerError) {
        try writer.writeOffsets(offsets)
        collectWritten()
        ledger.noteStored(offsets)
    }

    /// Commits to the consumer group, on the consumer's thread, the stored offset of each of `partitions` that the
    /// group has not acknowledged: for lag monitoring and as a fallback, since the store is the source of truth.
    ///
    /// Asked at every checkpoint, with or without new input, so a commit the group refused (while it rebalanced) or one
    /// that never came (a partition just assigned, with nothing new to read) is made good. Without `waitForAnswer` the
    /// commit goes out in the background and the loop does not wait a round trip.
    func commitStored(
        of partitions: some Sequence<TopicPartition>,
        consumer: Consumer,
        waitForAnswer: Bool = false
    ) {
        let offsets = ledger.uncommitted(of: partitions, acknowledged: consumer.acknowledgedCommits)
        guard !offsets.isEmpty else { return }
        do {
            if waitForAnswer {
                try consumer.commit(offsets)
            } else {
                try consumer.commitInBackground(offsets)
            }
        } catch {
            // The next checkpoint tries again; the group refuses commits while it rebalances.
            logger.debug("group offset commit deferred", metadata: [ServiceLogKey.error: "\(error)"])
        }
    }

    /// Lets the checkpoint in hand finish, then ends the writer's threads.
    func stop() {
        writer.stop()
    }

    /// After a refused delivery: the worker has rewound to the stored state, checkpoints may be written again.
    func rewound() {
        writer.rewound()
    }

    /// Notes in the ledger what the writer stored since the last call.
    private func collectWritten() {
        let written = writer.takeWritten()
        ledger.noteStored(written.offsets)
        writtenSinceAsked += written.count
        if written.count > 0 { metrics.recordUpToDate() }
    }
}
