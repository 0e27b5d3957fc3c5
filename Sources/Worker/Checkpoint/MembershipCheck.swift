import Kafka

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
    /// Logged offsets of assigned partitions (their changelog records delivered): committing them says nothing new.
    let loggedOffsets: [TopicPartition: Int64]

    /// Asks the coordinator.
    ///
    /// - Throws: ``WorkerError`` `fenced` when the coordinator (or librdkafka) says this instance is no longer a member
    ///   of the current generation; `delivery` when no answer came within the session timeout (the coordinator
    ///   unreachable), which backs off and retries like a refused delivery.
    func confirm() throws(WorkerError) {
        guard !loggedOffsets.isEmpty else { return }
        let membership: Consumer.Membership
        do {
            membership = try consumer.confirmMembership(committing: loggedOffsets)
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
