import Foundation
import Kafka
import Logging
import Metrics
import PartitionOffsets

/// The loop's rebalance hooks, given to each poll of the group's consumer and to its close, so that they run inside
/// the poll, on the loop's thread, with the parts the loop owns.
///
/// On an assignment: the checkpoint in hand is written and the backlog stored (``Checkpointing/readyToReadStore(_:)``);
/// the lifecycle says whether to take it (a worker that is starting or leaving does not); ``PartitionHandover``
/// restores what is behind the changelog and says where each partition starts; the assigned partitions' devices are
/// loaded (``AssignedDevices``) and starts past the store are stored. On a revocation: a checkpoint is taken and stored,
/// committed to the group while the partitions are still this member's, and the revoked partitions are forgotten
/// (``Checkpointing/revoke(_:isLost:source:consumer:)``, then the merge).
///
/// A hook cannot throw through librdkafka: a failure in one is reported to the lifecycle, whose answer to
/// the end of the poll (``WorkerLifecycle/polled(now:)``) stops the loop; a refused checkpoint stays with the
/// ``CheckpointCycle`` and the loop rewinds after the poll.
extension Worker {
    /// Leaves the group (its last revocation checkpoints, with the producers still there), then closes the producers.
    func leave(_ connection: WorkerAssembly.Connection) {
        // A cancelled stop does not wait for a group that does not answer; the group takes the partitions back at the
        // session timeout.
        connection.consumer.close(giveUpWhen: { areWaitsAbandoned() }, onRevoke: { revoke($0, isLost: $1, connection) })
        connection.clients.close(giveUpWhen: { areWaitsAbandoned() })
    }

    /// The assign hook: where each partition starts, or nothing when the worker does not take the assignment.
    func assign(_ partitions: [TopicPartition], _ connection: WorkerAssembly.Connection) -> [TopicPartition: Int64] {
        let (lifecycle, devices, consumer, progress) = (
            parts.lifecycle, parts.devices, connection.consumer, parts.progress
        )
        // Where partitions start and what is loaded depend on what the store holds: the checkpoint in hand and the
        // backlog first. Refused, the loop rewinds after this poll, to the store as it stands.
        guard progress.readyToReadStore({ checkpointSource(connection) }) else { return [:] }
        guard lifecycle.report({ $0.assigned() }) == .restore else { return [:] }
        let started = ContinuousClock.now
        do {
            let assignment = try parts.handover.assign(
                partitions,
                consumer: consumer,
                held: devices.partitions,
                storedOffsets: progress.stored
            )
            if assignment.reloadDevices { try devices.load(partitions: Set(partitions.map(\.partition))) }
            try progress.assignmentStarts(assignment.starts, storing: assignment.advanced)
            logger.info(
                "assigned \(partitions.count) partitions",
                metadata: [
                    ServiceLogKey.resuming: "\(assignment.resuming)",
                    ServiceLogKey.devices: "\(devices.holdings.devices)",
                    ServiceLogKey.restoredRecords: "\(assignment.restored.records.values.reduce(0, +))",
                    ServiceLogKey.startOffsets: "\(Self.described(assignment.starts))",
                    ServiceLogKey.elapsed: "\(ContinuousClock.now - started)",
                ]
            )
            guard lifecycle.report({ $0.restored() }) == .consume else { return [:] }
            self.assignment.took(partitions.map(\.partition), of: connection.clients.inputPartitionCount)
            return assignment.starts
        } catch {
            abandon(with: error)
            return [:]
        }
    }

    /// The revoke hook: finishes the work in flight for partitions about to go, commits it to the group while
    /// they are still this member's, and forgets what was read of them.
    ///
    /// Partitions already lost (the member was gone past its session) are another member's: what was applied
    /// since the last checkpoint is dropped, never written (``lose(_:)``). So are those of an assignment librdkafka did
    /// not take after the assign hook answered (a fatal error raised meanwhile: the next poll fails the worker).
    func revoke(_ partitions: [TopicPartition], isLost: Bool, _ connection: WorkerAssembly.Connection) {
        logger.info("revoking \(partitions.count) partitions", metadata: [ServiceLogKey.lost: "\(isLost)"])
        // The group hears they are moving before their last checkpoint is written.
        assignment.gave(partitions.map(\.partition))
        if isLost { lose(partitions) }
        let stored = parts.progress.revoke(
            partitions,
            isLost: isLost,
            source: { checkpointSource(connection) },
            consumer: connection.consumer
        )
        logger.info(
            "revoked \(partitions.count) partitions",
            metadata: [ServiceLogKey.storedOffsets: "\(Self.described(stored))"]
        )
        // Their next owner, this worker again after an eager rebalance included, reads them again.
        for partition in partitions { merge.removeAll(partition: partition.partition) }
    }

    /// The partitions were lost: another member may be applying their input already.
    ///
    /// Nothing more of them is written
    /// (a checkpoint the writer has in hand meets the ``MembershipCheck``); after the poll the loop rewinds to the
    /// store without backing off, and the next assignment restores what the others wrote meanwhile.
    private func lose(_ partitions: [TopicPartition]) {
        let stored = parts.progress.stored(of: partitions)
        logger.error(
            """
            lost \(partitions.count) partitions to the group's other members (this instance was gone past its \
            session, or another took its instance id); dropping what was applied since the last checkpoint (the \
            worker's own fence: whatever the broker checks, nothing of it is written or committed)
            """,
            metadata: [
                KafkaLogKey.partitions: "\(partitions.sorted())",
                ServiceLogKey.storedOffsets: "\(Self.described(stored))",
            ]
        )
        parts.lostAssignments.increment()
        let action = parts.lifecycle.report {
            $0.assignmentLost(WorkerError(.fenced, "lost \(partitions.count) partitions"))
        }
        assert(action == .nothing, "a loss is acted on after the poll")
    }

    /// Partitions' offsets as a log line shows them, in partition order: `topic[2]@1042`.
    static func described(_ offsets: [TopicPartition: Int64]) -> String {
        offsets.sorted { $0.key < $1.key }.map { "\($0.key)@\($0.value)" }.joined(separator: ", ")
    }

    /// Reports a failure met in a hook to the lifecycle.
    ///
    /// Its action, to fail (or nothing once stopped), is carried out by the loop after the poll: its answer to
    /// ``WorkerLifecycle/polled(now:)`` says the same.
    private func abandon(with error: WorkerError) {
        let action = parts.lifecycle.report { $0.failed(error) }
        assert(action == .fail(error) || action == .nothing, "a failure's action is to fail")
    }
}
