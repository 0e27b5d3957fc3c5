import CRdKafka
public import PartitionOffsets
import Synchronization

/// Kafka transactions, on a producer with a `transactional.id` (``ProducerConfiguration/transactionalId``).
///
/// Every record sent between ``beginTransaction()`` and ``commitTransaction(timeout:)`` becomes visible to
/// `read_committed` readers at the commit, together with the consumer offsets sent with
/// ``sendOffsetsToTransaction(_:of:timeout:)``, or never (``abortTransaction(timeout:)``). Each call blocks the calling
/// thread until the coordinator answered or `timeout` passed.
///
/// What a failure means is in the ``KafkaError`` it throws: `isRetriable` (call again), `requiresAbort` (abort, then
/// begin again), `isFatal` (the producer is done: fenced by a newer one with the same `transactional.id`, or it lost
/// its guarantees).
extension Producer {
    /// Registers the `transactional.id` with its coordinator: a transaction a previous producer with the same id left
    /// open is aborted, and that producer is fenced (its next transactional call fails, fatally).
    ///
    /// - Throws: ``KafkaError``; from a broker without transactions, librdkafka's `UNSUPPORTED_FEATURE` or a
    ///   timeout.
    @available(*, noasync, message: "blocks the calling thread until the coordinator answers")
    public func initTransactions(timeout: Duration = .seconds(30)) throws(KafkaError) {
        try Self.check(rd_kafka_init_transactions(handle.pointer, Self.milliseconds(timeout)), "init_transactions")
    }

    /// Starts a transaction: what is sent from now on belongs to it.
    ///
    /// Local: no request goes out.
    public func beginTransaction() throws(KafkaError) {
        try Self.check(rd_kafka_begin_transaction(handle.pointer), "begin_transaction")
        connectionLossesAtBegin.store(connectionLosses, ordering: .relaxed)
        _ = ClientContext.of(handle.pointer)?.takeTransactionOffsets()
    }

    /// Whether the producer lost a connection to a broker (or had every broker down) since the transaction began.
    ///
    /// A broker that restarted meanwhile may not have kept the transaction's state: noida-db 0.2.3 answers the commit
    /// of such a transaction as done and hides what was sent before the restart. Aborting it is always safe.
    public var lostConnectionDuringTransaction: Bool {
        connectionLosses > connectionLossesAtBegin.load(ordering: .relaxed)
    }

    private var connectionLosses: Int {
        ClientContext.of(handle.pointer)?.connectionLosses.load(ordering: .relaxed) ?? 0
    }

    /// Makes `offsets` (the next offset to read of each input partition) the group's committed offsets when, and only
    /// when, the transaction commits; the group's metadata (member, generation) is `consumer`'s.
    @available(*, noasync, message: "blocks the calling thread until the coordinator answers")
    public func sendOffsetsToTransaction(
        _ offsets: [TopicPartition: Int64],
        of consumer: Consumer,
        timeout: Duration = .seconds(30)
    ) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        guard let metadata = rd_kafka_consumer_group_metadata(consumer.handle.pointer) else {
            throw KafkaError(code: .invalidState, message: "send_offsets_to_transaction: the consumer has no group")
        }
        defer { rd_kafka_consumer_group_metadata_destroy(metadata) }
        let list = TopicPartition.makeList(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        try Self.check(
            rd_kafka_send_offsets_to_transaction(handle.pointer, list, metadata, Self.milliseconds(timeout)),
            "send_offsets_to_transaction"
        )
    }

    /// Delivers everything sent in the transaction, then commits it.
    ///
    /// - Throws: ``KafkaError``: `requiresAbort` when a record was refused (the transaction must be aborted),
    ///   `isRetriable` on a timeout (calling again continues the commit).
    @available(*, noasync, message: "blocks the calling thread until the coordinator answers")
    public func commitTransaction(timeout: Duration = .seconds(60)) throws(KafkaError) {
        try Self.check(
            rd_kafka_commit_transaction(handle.pointer, Self.milliseconds(timeout)),
            "commit_transaction"
        )
    }

    /// Aborts the transaction: what it sent is purged or marked aborted, never seen by `read_committed` readers.
    ///
    /// - Returns: exactly where the records it had delivered landed, in each partition (the records still in flight
    ///   are purged: they never land), never an offset another producer's record took between them. A reader that
    ///   does not honour aborts (`read_uncommitted`, or a broker that writes no transaction markers, such as
    ///   librdkafka's mock cluster) sees these records; one that does never does.
    @available(*, noasync, message: "blocks the calling thread until the coordinator answers")
    @discardableResult
    public func abortTransaction(timeout: Duration = .seconds(60)) throws(KafkaError) -> [TopicPartition: OffsetRuns] {
        try Self.check(rd_kafka_abort_transaction(handle.pointer, Self.milliseconds(timeout)), "abort_transaction")
        // The abort flushes: every delivery report of the transaction has been served when it returns.
        return ClientContext.of(handle.pointer)?.takeTransactionOffsets() ?? [:]
    }

    /// Calls a transactional `operation` again while it fails with an error librdkafka says may be retried.
    ///
    /// A timeout is such an error: the call continues where the last left off. Until `deadline` if there is one;
    /// `onRetry` hears each such failure. An error that requires an abort, or is fatal, is thrown at once.
    public static func repeatingWhileRetriable(
        until deadline: ContinuousClock.Instant? = nil,
        onRetry: (KafkaError) -> Void = { _ in },
        _ operation: () throws(KafkaError) -> Void
    ) throws(KafkaError) {
        while true {
            do {
                return try operation()
            } catch
                where error.isRetriable && !error.requiresAbort && !error.isFatal
                && deadline.map({ ContinuousClock.now < $0 }) ?? true
            {
                onRetry(error)
            }
        }
    }

    private static func check(_ error: OpaquePointer?, _ operation: String) throws(KafkaError) {
        guard let error else { return }
        let failure = KafkaError(consuming: error)
        throw KafkaError(
            code: failure.code,
            message: "\(operation): \(failure.message)",
            isRetriable: failure.isRetriable,
            isFatal: failure.isFatal,
            requiresAbort: failure.requiresAbort
        )
    }

    private static func milliseconds(_ timeout: Duration) -> Int32 {
        Int32(clamping: max(0, timeout.wholeMilliseconds))
    }
}
