public import PartitionOffsets

/// Rebalance hooks given to one call, for an owner that keeps what they change to itself: the poll or the close runs
/// them (as a ``RebalanceHandler``'s, on the calling thread) instead of the consumer's own, and they need not outlive
/// the call, so they may change the caller's state with nothing held by the consumer between calls.
extension Consumer {
    /// ``poll(maxMessages:timeout:)`` with rebalance hooks of its own: a rebalance the poll serves runs `onAssign` and
    /// `onRevoke` (as a ``RebalanceHandler``'s, on this thread) instead of the consumer's handler.
    ///
    /// For an owner that keeps what the hooks change to itself: the hooks need not outlive the call, so they may
    /// change the caller's own state, with nothing held by the consumer between polls.
    @available(*, noasync, message: "blocks the calling thread; use nextBatch from async code")
    public func poll(
        maxMessages: Int = 10_000,
        timeout: Duration = .milliseconds(100),
        onAssign: ([TopicPartition]) -> [TopicPartition: Int64],
        onRevoke: ([TopicPartition], _ isLost: Bool) -> Void
    ) throws(KafkaError) -> ConsumerBatch {
        try withoutActuallyEscaping(onAssign) { assign throws(KafkaError) in
            try withoutActuallyEscaping(onRevoke) { revoke throws(KafkaError) in
                try state.withHooks(RebalanceHooks(assign: assign, revoke: revoke)) { () throws(KafkaError) in
                    try poll(maxMessages: maxMessages, timeout: timeout)
                }
            }
        }
    }

    /// ``close()`` with a revocation hook of its own: the last revocation, which leaving the group serves, runs
    /// `onRevoke` instead of the consumer's handler (see ``poll(maxMessages:timeout:onAssign:onRevoke:)``).
    ///
    /// The close gives up when `giveUp` says so (asked every 0.1 s) or after the session timeout.
    /// - Returns: whether the consumer left its group cleanly.
    @available(*, noasync, message: "blocks the calling thread while the consumer leaves its group")
    @discardableResult
    public func close(
        giveUpWhen giveUp: () -> Bool = { false },
        onRevoke: ([TopicPartition], _ isLost: Bool) -> Void
    ) -> Bool {
        withoutActuallyEscaping(onRevoke) { revoke in
            state.withHooks(RebalanceHooks(assign: { _ in [:] }, revoke: revoke)) { closeNow(giveUpWhen: giveUp) }
        }
    }
}
