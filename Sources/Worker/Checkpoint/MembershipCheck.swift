import Kafka
import PartitionOffsets

/// The fence before a checkpoint's changelog records: proof, from the group coordinator, that this instance is still a
/// member of its consumer group's current generation, asked just before the records are sent.
///
/// An instance paused past its session (a VM paused, CPU throttled, a long fsync) has lost its partitions to
/// the others without knowing; when it runs again it must not write what it had in hand to the changelog, where the
/// partitions' new owner, or a later restore, would read it. The coordinator takes an offset commit only from a
/// member of its current generation, so the check commits offsets the changelog already
/// covers (a real commit, and a harmless one) and waits for the answer (``Consumer/confirmMembership(committing:)``). The window it leaves, between the
/// answer and the records' arrival at the broker, is in docs/ARCHITECTURE.md.
struct MembershipCheck: Sendable {
    /// The group's consumer.
    let consumer: Consumer
    /// For each assigned partition, an offset committing which says nothing new
    /// (``OffsetLedger/confirmableOffsets(assigned:)``): logged, else where the assignment started it.
    let offsets: [TopicPartition: Int64]

    /// Asks the coordinator, before `sendingRecords` (changelog records) or a transaction's commit.
    ///
    /// With nothing to commit, no partition this instance holds has given it anything since its assignment: changelog
    /// records in hand are of partitions it no longer holds, and nothing of them is written; a transaction without any
    /// has nothing of theirs to commit, and goes on unchecked.
    ///
    /// - Throws: ``WorkerError`` `fenced` when the coordinator (or librdkafka) says this instance is no longer a member
    ///   of the current generation, or when it would send records of partitions it does not hold; `delivery` when no
    ///   answer came within the session timeout (the coordinator unreachable), which backs off and retries like a
    ///   refused delivery.
    func confirm(sendingRecords: Bool) throws(WorkerError) {
        guard !offsets.isEmpty else {
            guard sendingRecords else { return }
            throw WorkerError(
                .fenced,
                "none of the partitions whose devices changed is this instance's any more; the checkpoint in hand is dropped"
            )
        }
        let membership: Consumer.Membership
        do {
            membership = try consumer.confirmMembership(committing: offsets)
        } catch {
            throw WorkerError(
                .delivery,
                "cannot confirm the group membership before writing the changelog",
                underlying: error
            )
        }
        if case .lost(let answer) = membership {
            throw WorkerError(
                .fenced,
                """
                the group had given this instance's partitions to another member; the checkpoint in hand is dropped \
                (the worker's own fence: whatever the broker checks, nothing of it is written or committed)
                """,
                underlying: answer
            )
        }
    }
}
