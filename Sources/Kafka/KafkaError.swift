import CRdKafka

/// An error from the Kafka layer: a librdkafka error code, a readable message, and what the caller
/// may do about it.
///
/// `code` is extensible (a struct with static members, not an enum) so that librdkafka codes this
/// module has no name for still come through intact.
public struct KafkaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A librdkafka error code (`rd_kafka_resp_err_t`): negative for client-side errors, positive for
    /// errors the broker returned.
    public struct Code: Hashable, Sendable, RawRepresentable, CustomStringConvertible {
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// librdkafka's symbolic name, such as `MSG_SIZE_TOO_LARGE` or `_TRANSPORT`.
        public var name: String { String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue))) }
        public var description: String { name }

        public static let invalidArgument = Code(rawValue: RD_KAFKA_RESP_ERR__INVALID_ARG.rawValue)
        public static let invalidState = Code(rawValue: RD_KAFKA_RESP_ERR__STATE.rawValue)
        public static let timedOut = Code(rawValue: RD_KAFKA_RESP_ERR__TIMED_OUT.rawValue)
        public static let queueFull = Code(rawValue: RD_KAFKA_RESP_ERR__QUEUE_FULL.rawValue)
        public static let transport = Code(rawValue: RD_KAFKA_RESP_ERR__TRANSPORT.rawValue)
        public static let allBrokersDown = Code(rawValue: RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN.rawValue)
        public static let messageTimedOut = Code(rawValue: RD_KAFKA_RESP_ERR__MSG_TIMED_OUT.rawValue)
        public static let purgedFromQueue = Code(rawValue: RD_KAFKA_RESP_ERR__PURGE_QUEUE.rawValue)
        public static let purgedInFlight = Code(rawValue: RD_KAFKA_RESP_ERR__PURGE_INFLIGHT.rawValue)
        public static let unknownTopic = Code(rawValue: RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC.rawValue)
        public static let unknownPartition = Code(rawValue: RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION.rawValue)
        public static let unknownTopicOrPartition = Code(
            rawValue: RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART.rawValue
        )
        public static let messageSizeTooLarge = Code(rawValue: RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE.rawValue)
        public static let fatal = Code(rawValue: RD_KAFKA_RESP_ERR__FATAL.rawValue)
        public static let rebalanceInProgress = Code(rawValue: RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS.rawValue)
        /// The group coordinator's answer to a member of an earlier generation.
        public static let illegalGeneration = Code(rawValue: RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION.rawValue)
        public static let topicAuthorizationFailed = Code(
            rawValue: RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED.rawValue
        )
        public static let destroyed = Code(rawValue: RD_KAFKA_RESP_ERR__DESTROY.rawValue)
    }

    public let code: Code
    /// What went wrong, in words (librdkafka's, where it gave any).
    public let message: String
    /// The same operation may succeed if tried again later (a broker was unreachable, a queue was full).
    public let isRetriable: Bool
    /// The client instance can no longer be used (for example the idempotent producer lost its
    /// guarantees); the only way on is a new instance.
    public let isFatal: Bool
    /// A transaction's operation failed and the transaction must be aborted before the producer goes on (the
    /// client is not fatal: ``Producer/abortTransaction(timeout:)``, then a new transaction).
    public let requiresAbort: Bool

    public init(
        code: Code,
        message: String,
        isRetriable: Bool? = nil,
        isFatal: Bool = false,
        requiresAbort: Bool = false
    ) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable ?? Self.retriableCodes.contains(code)
        self.isFatal = isFatal
        self.requiresAbort = requiresAbort
    }

    public var description: String {
        var text = "Kafka error \(code.name) (\(code.rawValue)): \(message)"
        if isFatal {
            text += " [fatal]"
        } else if requiresAbort {
            text += " [abort the transaction]"
        } else if isRetriable {
            text += " [retriable]"
        }
        return text
    }

    /// Codes that describe a passing condition rather than a wrong request.
    ///
    /// librdkafka says so itself for `rd_kafka_error_t` values; for bare codes this is the same judgement.
    private static let retriableCodes: Set<Code> = [
        .timedOut, .queueFull, .transport, .allBrokersDown,
        Code(rawValue: RD_KAFKA_RESP_ERR__RESOLVE.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR__WAIT_COORD.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_NOT_COORDINATOR.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND.rawValue),
        Code(rawValue: RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS.rawValue),
    ]
}

extension KafkaError {
    /// An error from a bare librdkafka code, with librdkafka's text unless `message` says more.
    init(_ err: rd_kafka_resp_err_t, _ message: String? = nil) {
        let text = String(cString: rd_kafka_err2str(err))
        self.init(code: Code(rawValue: err.rawValue), message: message.map { "\($0): \(text)" } ?? text)
    }

    /// Takes over an `rd_kafka_error_t` (and destroys it), keeping librdkafka's own retriable and
    /// fatal flags.
    init(consuming error: OpaquePointer) {
        defer { rd_kafka_error_destroy(error) }
        self.init(
            code: Code(rawValue: rd_kafka_error_code(error).rawValue),
            message: String(cString: rd_kafka_error_string(error)),
            isRetriable: rd_kafka_error_is_retriable(error) != 0,
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            requiresAbort: rd_kafka_error_txn_requires_abort(error) != 0
        )
    }

    /// The client's fatal error, when `err` is `_FATAL` (which only says "look at the fatal error").
    static func resolvingFatal(_ err: rd_kafka_resp_err_t, handle: OpaquePointer, context: String? = nil) -> KafkaError
    {
        guard err == RD_KAFKA_RESP_ERR__FATAL, let fatal = fatalError(of: handle) else {
            return KafkaError(err, context)
        }
        guard let context else { return fatal }
        return KafkaError(code: fatal.code, message: "\(context): \(fatal.message)", isRetriable: false, isFatal: true)
    }

    /// The fatal error a client has raised, if any (only the idempotent producer raises them).
    static func fatalError(of handle: OpaquePointer) -> KafkaError? {
        var buffer = [CChar](repeating: 0, count: 512)
        let underlying = rd_kafka_fatal_error(handle, &buffer, buffer.count)
        guard underlying != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        return KafkaError(
            code: Code(rawValue: underlying.rawValue),
            message: String(errorBuffer: buffer),
            isRetriable: false,
            isFatal: true
        )
    }
}

extension String {
    /// The text librdkafka wrote into an error buffer, up to its terminating NUL.
    init(errorBuffer: [CChar]) {
        self.init(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
