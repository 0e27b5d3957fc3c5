import GeoCore
import Kafka

/// The loop's side of its checkpoints: what a checkpoint is taken from (``Checkpointing/Source``), and a round's turn.
/// When one is taken, in which order, and what follows its answer is the ``Checkpointing``'s.
extension Worker {
    /// The checkpoint's turn in a round (``Checkpointing/turn(_:consumer:)``), and the processing metrics published.
    func checkpointTurn(_ connection: WorkerAssembly.Connection) {
        if parts.progress.turn({ checkpointSource(connection) }, consumer: connection.consumer) {
            let counters = self.counters
            metrics.publish(counters)
            deadLetterLog.note(counters, logger: logger)
        } else {
            // The metrics follow the tally between checkpoints too, busy apply threads or not.
            metrics.publishBetweenPolls(counters)
        }
    }

    /// What a checkpoint is taken from now: the apply threads and the shards they apply, the assigned partitions, and
    /// the clients its records and transaction go out through.
    func checkpointSource(_ connection: WorkerAssembly.Connection) -> Checkpointing.Source {
        let (consumer, clients, applyThreads, devices) = (
            connection.consumer, connection.clients, parts.applyThreads, parts.devices
        )
        let changelog = clients.changelogSink
        return Checkpointing.Source(
            waitUntilApplied: { [self] in waitUntilApplied() },
            changes: { eventfulOnly in applyThreads.takeChanges(of: devices.shards, eventfulOnly ? .eventful : .all) },
            assigned: consumer.assignment,
            changelog: changelog,
            membership: { changelog == nil ? nil : MembershipCheck(consumer: consumer, offsets: $0) },
            transaction: clients.transaction(committingFor: consumer),
            holdings: { devices.holdings },
            waitsAbandoned: { [self] in areWaitsAbandoned() }
        )
    }
}
