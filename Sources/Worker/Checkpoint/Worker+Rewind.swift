import Kafka
import Logging
import Metrics

/// The loop's way back to its last written checkpoint, after the ``CheckpointCycle``'s writer refused one or the group
/// took the partitions away.
///
/// A delivery the broker refused for good (authorization, a record it rejects) or a write the disk refused (full,
/// failing): the worker returns to its last written checkpoint in process, waits out a back-off and reads again
/// from there. Lost partitions rewind the same way, at once.
///
/// Applying and sending again re-emits the same events with the same ids (they derive from the input offsets), so
/// nothing is lost and no id names two events.
extension Worker {
    /// Rewinds to the last written checkpoint, backs off and resumes reading there.
    ///
    /// The rewind: the progress goes back to the store (``Checkpointing/rewind(_:)``: the shards finish what they were
    /// handed, the checkpoint in hand ends, the backlog is stored, what was released or applied since is forgotten, the
    /// checkpoints writable again); new producers (the old ones' queues purged, so nothing sent after the refused
    /// records gets out); the devices as stored; the merges emptied. Then no polls
    /// until the back-off is over (the group keeps the member for `max.poll.interval.ms`, longer than the
    /// longest back-off; a stop request ends the wait at once), and each assigned partition is sought back to
    /// its stored offset, or where its assignment started it (``OffsetLedger/rewindTargets(assigned:)``).
    ///
    /// - Returns: the lifecycle's next action: consume, or finish when a stop came during the back-off.
    /// - Throws: ``WorkerError`` when a new producer cannot start or the store cannot be read.
    func rewind(
        after reason: WorkerError,
        refusals: Int,
        delay: Duration,
        on connection: WorkerAssembly.Connection
    ) throws(WorkerError) -> WorkerLifecycle.Action {
        let (lifecycle, devices) = (parts.lifecycle, parts.devices)
        logger.error(
            "\(Self.rewindHeadline(reason))",
            metadata: [
                ServiceLogKey.error: "\(reason)", ServiceLogKey.refusals: "\(refusals)",
                ServiceLogKey.retryIn: "\(delay)",
            ]
        )
        if let refusal = reason.underlying as? DeliveryRefusal { recordDeliveryFailures(refusal.counts) }
        if reason.isStorageFailure { parts.stateWriteFailures.increment() }
        // After a loss the writer may still have a checkpoint in hand: it ends (written, or refused by the group).
        let restart = try parts.progress.rewind { checkpointSource(connection) }
        let consumer = connection.consumer
        try connection.clients.replaceProducers()
        try devices.reload()
        merge.rewind()

        let next = lifecycle.waitOutBackoff(
            lifecycle.report { $0.backoffElapsed(now: clock.now) },
            clock: clock,
            stop: stopRequest
        )
        guard next == .consume else { return next }
        do {
            // Partitions revoked meanwhile are not this member's to move: their next owner starts at the stored
            // offset anyway.
            let assigned = consumer.assignment
            try consumer.seek(restart.filter { assigned.contains($0.key) })
        } catch {
            logger.warning("rewinding the read positions", metadata: [ServiceLogKey.error: "\(error)"])
        }
        logger.info("resuming from the last checkpoint")
        return next
    }

    /// What the rewind's log line says first.
    private static func rewindHeadline(_ reason: WorkerError) -> String {
        switch reason.code {
        case .delivery: "delivery refused; rewinding to the last checkpoint"
        case .fenced: "the group gave this instance's partitions to another member; rewinding to the last checkpoint"
        default: "cannot write the state; rewinding to the last checkpoint"
        }
    }

    /// Counts records the broker refused, by topic and librdkafka error name.
    private func recordDeliveryFailures(_ counts: [String: [String: Int]]) {
        for (topic, errors) in counts {
            for (error, count) in errors {
                Counter(
                    label: MetricName.deliveryFailures,
                    dimensions: [("topic", topic), ("error", error)],
                    factory: parts.metricsFactory
                )
                .increment(by: count)
            }
        }
    }
}
