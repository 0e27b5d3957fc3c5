import GeoCore
import Kafka
import Logging
import Metrics

/// The loop's checkpoint steps: it asks its ``CheckpointCycle`` what to do and carries the answer out with the parts it
/// owns (the apply threads, the ledger, the devices, the ``CheckpointWriter``).
extension Worker {
    /// The checkpoint's turn in a round: when one is due it is taken and handed to the writer, the group is sent the
    /// stored offsets it lacks, and lag and holdings are recorded.
    ///
    /// - Returns: the lifecycle's answer: consume, or fail.
    func checkpointTurn(_ connection: WorkerAssembly.Connection) -> WorkerLifecycle.Action {
        guard checkpoints.turn(now: clock.now) == .take else {
            // The metrics follow the tally between checkpoints too, busy apply threads or not.
            metrics.publishBetweenPolls(counters)
            return .consume
        }
        takeCheckpoint(connection)
        if connection.clients.isTransactional {
            // What the apply threads send next belongs to the next transaction: nothing is sent while this one commits.
            // The store is written meanwhile; a refusal is the answer's, taken after the next poll.
            parts.writer.waitForDeliveries()
        }
        metrics.publish(counters)
        let (consumer, assigned) = (connection.consumer, connection.consumer.assignment)
        commitStored(of: assigned, consumer: consumer)
        checkpointMetrics.recordLag(
            highWatermarks: consumer.cachedHighWatermarks(for: assigned),
            applied: parts.ledger.latestApplied
        )
        checkpointMetrics.recordHoldings(parts.devices.holdings)
        return .consume
    }

    /// Carries out the writer's answer if it has come (``CheckpointCycle/answered(_:)``), and reports a refusal
    /// to the lifecycle, which rewinds: whether it came now or to a rebalance hook inside the poll.
    ///
    /// - Returns: the lifecycle's answer: consume, rewind, or fail.
    func takeCheckpointAnswer() -> WorkerLifecycle.Action {
        if let answer = parts.writer.takeAnswer(), let failed = carryOut(checkpoints.answered(answer)) {
            return failed
        }
        if let refusal = checkpoints.refusal {
            return parts.lifecycle.report { $0.checkpointFailed(refusal, now: clock.now) }
        }
        return .consume
    }

    /// Before an assignment, a revocation or a rewind: waits for the checkpoint in hand, if any, and carries out its
    /// answer; a refusal stays with the cycle for the loop to report after the poll.
    ///
    /// - Returns: the lifecycle's answer to a failure of the store; nil otherwise.
    func settleCheckpoint(while keepWaiting: () -> Bool = { true }) -> WorkerLifecycle.Action? {
        guard checkpoints.settle() == .waitForWriter, let answer = parts.writer.waitForAnswer(while: keepWaiting)
        else { return nil }
        return carryOut(checkpoints.answered(answer))
    }

    /// Takes a checkpoint (the apply threads finished first) and hands it to the writer, when the cycle allows one.
    ///
    /// The writer must be free and nothing refused. `storing`: the store must hold it (a revocation's, the last one).
    /// A complete checkpoint takes every changed device and the applied offsets; an eventful one the devices with an
    /// eventful change only, and leaves the offsets for the next complete one (``CheckpointCycle/Scope``).
    func takeCheckpoint(_ connection: WorkerAssembly.Connection, storing: Bool = false) {
        guard checkpoints.canTake, !areWaitsAbandoned() else { return }
        finishApplying()
        let (consumer, clients) = (connection.consumer, connection.clients)
        let changelog = clients.changelogSink
        let assigned = consumer.assignment
        let scope = checkpoints.scope(now: clock.now, storing: storing)
        let isComplete = scope != .eventful
        let checkpoint = Checkpoint(
            shards: parts.applyThreads.takeChanges(of: parts.devices.shards, isComplete ? .all : .eventful),
            offsets: isComplete ? parts.ledger.takeApplied() : [:],
            isComplete: isComplete,
            changelog: changelog,
            membership: changelog == nil
                ? nil
                : MembershipCheck(consumer: consumer, offsets: parts.ledger.confirmableOffsets(assigned: assigned)),
            transaction: clients.transaction(committingFor: consumer)
        )
        switch checkpoints.taken(isEmpty: checkpoint.isEmpty, now: clock.now, scope: scope) {
        case .write(let storing): parts.writer.write(checkpoint, storing: storing)
        case .upToDate: checkpointMetrics.recordUpToDate()
        case .none: break
        case let step: preconditionFailure("a checkpoint taken, then \(step)")
        }
    }

    /// A stop's last checkpoint: the one in hand settled, one more taken and written; the waits given up once the
    /// stop is cancelled (``Worker/cancel()``), the cycle then stopped with the writer's answer not waited for.
    ///
    /// - Returns: consume to go on stopping; rewind for a catch-up run whose last checkpoint was refused (it ends well
    ///   only with everything delivered); fail.
    func takeLastCheckpoint(_ connection: WorkerAssembly.Connection) -> WorkerLifecycle.Action {
        let lifecycle = parts.lifecycle
        finishApplying()
        let keepWaiting = { [self] in !areWaitsAbandoned() }
        if let failed = settleCheckpoint(while: keepWaiting) { return failed }
        takeCheckpoint(connection, storing: true)
        if let failed = settleCheckpoint(while: keepWaiting) { return failed }
        if let refusal = checkpoints.refusal {
            let afterRefusal = lifecycle.report { $0.checkpointFailed(refusal, now: clock.now) }
            if case .fail = afterRefusal { return afterRefusal }
            if case .rewind = afterRefusal { return afterRefusal }
            // No going back while stopping: the stored state stays as it was, and a restart replays the rest.
            logger.warning("stopping with the last checkpoint not written; the state stays as last stored: \(refusal)")
        }
        checkpoints.stopped()
        return .consume
    }

    /// Carries out a step that follows the writer's answer: a written checkpoint's offsets noted as stored (the
    /// lifecycle told), or the store's failure reported.
    ///
    /// - Returns: the lifecycle's answer to a failure; nil otherwise.
    private func carryOut(_ step: CheckpointCycle.Step) -> WorkerLifecycle.Action? {
        switch step {
        case .none:
            return nil
        case .written(let written):
            if let failure = written.storeFailure {
                parts.stateWriteFailures.increment()
                logger.warning(
                    "the transaction committed, the store could not be written; it is written with a later checkpoint",
                    metadata: [ServiceLogKey.error: "\(failure)"]
                )
            }
            parts.ledger.noteLogged(written.logged)
            if let stored = written.stored { parts.ledger.noteStored(stored) }
            if written.isComplete { checkpointMetrics.recordUpToDate() }
            _ = parts.lifecycle.report { $0.checkpointWritten() }
            return nil
        case .fail(let error):
            return parts.lifecycle.report { $0.failed(error) }
        case .take, .write, .upToDate, .waitForWriter, .storeBacklog:
            preconditionFailure("\(step) does not follow an answer")
        }
    }

    /// Before the store is read, the writer's backlog written to it (``CheckpointCycle/storeNow()``).
    ///
    /// An assignment loads devices from the store, a rewind goes back to it. A refusal (the disk full) stays with the
    /// cycle.
    ///
    /// - Returns: the lifecycle's answer to a failure of the store; nil otherwise.
    func storeBacklogFirst() -> WorkerLifecycle.Action? {
        guard checkpoints.storeNow() == .storeBacklog else { return nil }
        let result: Result<Void, WorkerError>
        do {
            parts.ledger.noteStored(try parts.writer.storeBacklog())
            result = .success(())
        } catch {
            result = .failure(error)
        }
        return carryOut(checkpoints.backlogStored(result, now: clock.now))
    }

    /// Writes the start offsets of an assignment that the group moved past the store, so that a rewind or a group
    /// commit never goes back before them.
    ///
    /// - Throws: a failure of the store.
    func storeStarts(_ offsets: [TopicPartition: Int64]) throws(WorkerError) {
        try parts.writer.writeOffsets(offsets)
        parts.ledger.noteStored(offsets)
    }

    /// Commits to the consumer group, on the consumer's thread, the stored offset of each of `partitions` that the
    /// group has not acknowledged: for lag monitoring and as a fallback, since the store is the source of truth.
    ///
    /// Asked at every checkpoint, with or without new input, so a commit the group refused (while it rebalanced) or one
    /// that never came (a partition just assigned, with nothing new to read) is made good. Without `waitForAnswer` the
    /// commit goes out in the background and the loop does not wait a round trip.
    ///
    /// Never under exactly-once: the group's offsets are committed with each transaction, and the store, which lags
    /// them, would move them back.
    func commitStored(
        of partitions: some Sequence<TopicPartition>,
        consumer: Consumer,
        waitForAnswer: Bool = false
    ) {
        guard configuration.transactionalId == nil else { return }
        let offsets = parts.ledger.uncommitted(of: partitions, acknowledged: consumer.acknowledgedCommits)
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
}
