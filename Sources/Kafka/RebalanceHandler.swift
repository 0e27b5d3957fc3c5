public import PartitionOffsets

/// What a consumer's owner does when the group gives it partitions or takes them away.
///
/// Both hooks run synchronously on the thread that polls, inside the poll during which the group
/// rebalanced, so they are ordered with the batches that thread processes.
public struct RebalanceHandler: Sendable {
    /// Called once partitions are assigned and before any of them is read.
    ///
    /// Return the offset to start each partition at (the offset of the next message to read) for the partitions whose
    /// progress the caller keeps itself; the others start at the group's committed offset, or per `auto.offset.reset`.
    ///
    /// Should librdkafka then not take the assignment (its assign call failed, or the consumer raised a fatal error
    /// meanwhile, after which it takes an assignment as an unassignment without an error), ``onRevoke`` follows at
    /// once with those partitions and `isLost`: they were never this consumer's.
    public var onAssign: @Sendable (_ partitions: [TopicPartition]) -> [TopicPartition: Int64]
    /// Called before partitions are taken away: the consumer still owns them until this returns, so this is where a
    /// batch in flight is finished and its progress stored.
    ///
    /// `isLost` is true when the group already gave them to another member (this one missed its session timeout):
    /// finishing is then pointless, as the other member may be processing them.
    ///
    /// Group commits from this hook reach real brokers during an eager rebalance, but librdkafka's mock
    /// cluster refuses them (`REBALANCE_IN_PROGRESS`) while the group is joining: callers that must not
    /// lose progress keep their offsets in their own store too.
    public var onRevoke: @Sendable (_ partitions: [TopicPartition], _ isLost: Bool) -> Void

    public init(
        onAssign: @escaping @Sendable (_ partitions: [TopicPartition]) -> [TopicPartition: Int64] = { _ in [:] },
        onRevoke: @escaping @Sendable (_ partitions: [TopicPartition], _ isLost: Bool) -> Void = { _, _ in }
    ) {
        self.onAssign = onAssign
        self.onRevoke = onRevoke
    }
}

/// The hooks of one rebalance: the consumer's own (``RebalanceHandler``), or those its owner gave the poll or close
/// under way (``Consumer/poll(maxMessages:timeout:onAssign:onRevoke:)``), which need not outlive the call.
struct RebalanceHooks {
    let assign: ([TopicPartition]) -> [TopicPartition: Int64]
    let revoke: ([TopicPartition], Bool) -> Void

    init(
        assign: @escaping ([TopicPartition]) -> [TopicPartition: Int64],
        revoke: @escaping ([TopicPartition], Bool) -> Void
    ) {
        self.assign = assign
        self.revoke = revoke
    }

    init(_ handler: RebalanceHandler) {
        self.init(assign: handler.onAssign, revoke: handler.onRevoke)
    }
}
