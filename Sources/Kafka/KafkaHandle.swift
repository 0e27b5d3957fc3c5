import CRdKafka
import Logging
import PartitionOffsets
import Synchronization

/// Owns one librdkafka client instance (`rd_kafka_t *`) and the Swift state its callbacks reach.
///
/// This is the one place a raw client pointer lives. librdkafka documents its client API as thread-safe,
/// which is why the type is `@unchecked Sendable`. The instance is destroyed when the last owner lets go:
/// consumed batches hold a reference too, because librdkafka requires every message to be released
/// before its client is destroyed.
final class KafkaHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    let context: ClientContext
    /// A consumer's message queue (`rd_kafka_queue_t *`), which its main queue is forwarded to, so one batch poll
    /// serves messages, rebalances and errors alike.
    ///
    /// Nil for producers.
    let consumerQueue: OpaquePointer?

    /// Creates a client from librdkafka properties, applied in order.
    ///
    /// - Throws: ``KafkaError`` with code `invalidArgument` naming the property that librdkafka refused
    ///   (never its value, which may be a secret), or librdkafka's reason when the client cannot start.
    init(
        kind: rd_kafka_type_t,
        properties: [(String, String)],
        context: ClientContext,
        configure: (OpaquePointer) -> Void = { _ in }
    ) throws(KafkaError) {
        guard let conf = rd_kafka_conf_new() else {
            throw KafkaError(code: .invalidState, message: "librdkafka could not allocate a configuration")
        }
        var errorText = [CChar](repeating: 0, count: 512)
        for (key, value) in properties {
            let result = rd_kafka_conf_set(conf, key, value, &errorText, errorText.count)
            guard result == RD_KAFKA_CONF_OK else {
                rd_kafka_conf_destroy(conf)
                throw KafkaError(
                    code: .invalidArgument,
                    message: "configuration property '\(key)' was refused: \(String(errorBuffer: errorText))"
                )
            }
        }
        rd_kafka_conf_set_opaque(conf, Unmanaged.passUnretained(context).toOpaque())
        rd_kafka_conf_set_log_cb(conf, kafkaLogCallback)
        rd_kafka_conf_set_error_cb(conf, kafkaErrorCallback)
        configure(conf)

        // On success rd_kafka_new() takes the configuration; on failure it is still ours.
        guard let handle = rd_kafka_new(kind, conf, &errorText, errorText.count) else {
            rd_kafka_conf_destroy(conf)
            throw KafkaError(code: .invalidArgument, message: String(errorBuffer: errorText))
        }
        self.pointer = handle
        self.context = context
        if kind == RD_KAFKA_CONSUMER {
            rd_kafka_poll_set_consumer(handle)
            self.consumerQueue = rd_kafka_queue_get_consumer(handle)
        } else {
            self.consumerQueue = nil
        }
    }

    deinit {
        if let consumerQueue { rd_kafka_queue_destroy(consumerQueue) }
        // Blocks until librdkafka's own threads are gone; `context` is released only afterwards,
        // so no callback can outlive it.
        rd_kafka_destroy(pointer)
    }

    /// The number of partitions of `topic`, from a metadata request.
    ///
    /// Blocks up to `timeout`.
    /// - Throws: ``KafkaError`` `unknownTopicOrPartition` when the cluster has no such topic.
    func partitionCount(topic: String, timeout: Duration) throws(KafkaError) -> Int {
        var metadataPointer: UnsafePointer<rd_kafka_metadata>?
        // All topics rather than one topic handle: asking for one topic by name may auto-create it on
        // brokers that allow that, and a check must not create what it checks.
        let err = rd_kafka_metadata(pointer, 1, nil, &metadataPointer, Int32(timeout.wholeMilliseconds))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata = metadataPointer else {
            throw KafkaError(err, "metadata request for topic '\(topic)'")
        }
        defer { rd_kafka_metadata_destroy(metadata) }
        let topics = UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt))
        guard let entry = topics.first(where: { String(cString: $0.topic) == topic }) else {
            throw KafkaError(code: .unknownTopicOrPartition, message: "topic '\(topic)' does not exist")
        }
        guard entry.err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(entry.err, "topic '\(topic)'") }
        return Int(entry.partition_cnt)
    }

    func watermarks(of partition: TopicPartition, timeout: Duration) throws(KafkaError) -> (low: Int64, high: Int64) {
        var low: Int64 = 0
        var high: Int64 = 0
        let err = rd_kafka_query_watermark_offsets(
            pointer,
            partition.topic,
            partition.partition,
            &low,
            &high,
            Int32(timeout.wholeMilliseconds)
        )
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "watermarks of \(partition)") }
        return (low, high)
    }
}

/// Swift state shared with librdkafka's C callbacks through the client's opaque pointer.
final class ClientContext: Sendable {
    let logger: Logger
    /// The consumer's rebalance handling, called from inside a poll on the polling thread.
    let rebalance:
        (@Sendable (OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Void)?
    /// The consumer's record of the broker's answer to an offset commit, called from inside a poll.
    let committed: (@Sendable (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Void)?
    /// How many times the client reported a connection to a broker lost, or every broker down.
    let connectionLosses = Atomic<Int>(0)
    /// A transactional producer's: where the records of its open transaction landed (nil for other clients).
    let transactionOffsets: Mutex<[TopicPartition: OffsetRuns]>?

    init(
        logger: Logger,
        rebalance: (
            @Sendable (OpaquePointer, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) ->
                Void
        )? = nil,
        committed: (@Sendable (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> Void)? = nil,
        tracksTransactions: Bool = false
    ) {
        self.logger = logger
        transactionOffsets = tracksTransactions ? Mutex([:]) : nil
        self.rebalance = rebalance
        self.committed = committed
    }

    /// A record of the open transaction landed at `offset` (a transactional producer's delivery report).
    func noteInTransaction(_ partition: TopicPartition, offset: Int64) {
        transactionOffsets?.withLock { $0[partition, default: OffsetRuns()].insert(offset) }
    }

    /// Where the open transaction's records landed, forgotten as they are returned (a new transaction, an abort).
    func takeTransactionOffsets() -> [TopicPartition: OffsetRuns] {
        transactionOffsets?.withLock { offsets in
            defer { offsets = [:] }
            return offsets
        } ?? [:]
    }

    static func of(_ handle: OpaquePointer?) -> ClientContext? {
        guard let handle, let opaque = rd_kafka_opaque(handle) else { return nil }
        return Unmanaged<ClientContext>.fromOpaque(opaque).takeUnretainedValue()
    }
}

/// librdkafka's log lines, at their syslog level, into swift-log.
///
/// Called on librdkafka's threads.
private func kafkaLogCallback(
    handle: OpaquePointer?,
    level: Int32,
    facility: UnsafePointer<CChar>?,
    text: UnsafePointer<CChar>?
) {
    guard let context = ClientContext.of(handle), let text else { return }
    let logLevel: Logger.Level
    switch level {
    case ...2: logLevel = .critical
    case 3: logLevel = .error
    case 4: logLevel = .warning
    case 5: logLevel = .notice
    case 6: logLevel = .info
    default: logLevel = .debug
    }
    context.logger.log(
        level: logLevel,
        "\(String(cString: text))",
        metadata: [KafkaLogKey.rdkafkaFacility: "\(facility.map { String(cString: $0) } ?? "")"]
    )
}

/// Client-level errors (brokers unreachable, authentication, fatal errors).
///
/// librdkafka recovers from most of them by itself; they are logged so that an operator sees why progress
/// stalls.
private func kafkaErrorCallback(
    handle: OpaquePointer?,
    err: Int32,
    reason: UnsafePointer<CChar>?,
    opaque: UnsafeMutableRawPointer?
) {
    guard let context = ClientContext.of(handle) else { return }
    let code = KafkaError.Code(rawValue: err)
    if code == .transport || code == .allBrokersDown { context.connectionLosses.add(1, ordering: .relaxed) }
    let isFatal = code == .fatal
    context.logger.log(
        level: isFatal ? .critical : .warning,
        "Kafka client error: \(reason.map { String(cString: $0) } ?? code.name)",
        metadata: [KafkaLogKey.kafkaError: "\(code.name)"]
    )
}
