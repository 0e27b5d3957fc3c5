import CRdKafka
public import PartitionOffsets

extension Consumer {
    /// The group coordinator's answer to whether this consumer is a member of the group's current generation.
    public enum Membership: Sendable, Equatable {
        /// The coordinator accepted a request only the current generation's members may make.
        case confirmed
        /// The coordinator, or librdkafka itself, said this consumer is not (or no longer) a member of the current
        /// generation: its partitions may be another member's already.
        case lost(KafkaError)
    }

    /// Asks the group coordinator, by committing `offsets` and waiting for the answer, whether this consumer is still a
    /// member of the group's current generation.
    ///
    /// The coordinator takes an offset commit only from a member of its current generation (the request carries the
    /// member id and generation), so an accepted commit proves membership at the moment of the answer. Commit only
    /// offsets that may be committed anyway (ones already stored): the commit is real. Safe from any thread:
    /// the answer comes to a queue of this call's own.
    ///
    /// - Parameter offsets: the next offset to read, per partition; at least one, or nothing is asked.
    /// - Returns: ``Membership/confirmed``, or ``Membership/lost(_:)`` with the answer that said otherwise
    ///   (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS, or librdkafka's own
    ///   knowledge that the assignment was lost).
    /// - Throws: ``KafkaError`` `timedOut` when no answer came within the session timeout (the coordinator
    ///   unreachable), or the commit's error when it failed otherwise.
    @available(*, noasync, message: "blocks the calling thread")
    public func confirmMembership(committing offsets: [TopicPartition: Int64]) throws(KafkaError) -> Membership {
        precondition(!offsets.isEmpty, "a membership check commits at least one offset")
        do {
            try commit(offsets)
            return .confirmed
        } catch  where Self.membershipLostCodes.contains(error.code) {
            return .lost(error)
        }
    }

    /// Answers that mean this consumer is not a member of the current generation.
    private static let membershipLostCodes: Set<KafkaError.Code> = [
        .illegalGeneration,
        KafkaError.Code(rawValue: RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID.rawValue),
        KafkaError.Code(rawValue: RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID.rawValue),
        KafkaError.Code(rawValue: RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST.rawValue),
        .rebalanceInProgress, .invalidState,
    ]
}
