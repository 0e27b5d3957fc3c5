import Kafka
import StateStore

/// Why the worker stopped or could not start: what it was doing (``code``, a closed set), what went wrong in
/// words, and the error underneath it (a ``KafkaError`` or ``StateStoreError`` with its own code), so that a
/// caller can still ask whether trying again may help.
public struct WorkerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the worker was doing.
    ///
    /// A closed set, like swift-service-lifecycle's `ServiceGroupError.Code`: a new case is a new static member, never
    /// a value made up by a caller.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case topics, kafka, delivery, state, configuration, countries, changelog, unavailable, fenced, shutdown
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        public var description: String { base.rawValue }

        /// A topic is missing, or the input topics are not co-partitioned.
        public static let topics = Code(.topics)
        /// Kafka refused the configuration or the client failed.
        public static let kafka = Code(.kafka)
        /// Events or dead letters could not be delivered; nothing after them was persisted.
        public static let delivery = Code(.delivery)
        /// The state directory could not be opened or written.
        public static let state = Code(.state)
        /// A setting (flag, environment variable or config file) has a value the worker cannot use.
        public static let configuration = Code(.configuration)
        /// The bundled country data could not be read.
        public static let countries = Code(.countries)
        /// A changelog record could not be restored (bytes no geoworker this old can read): the worker stops
        /// rather than start that device from nothing.
        public static let changelog = Code(.changelog)
        /// The worker gave up: Kafka refused deliveries, or could not be reached, for longer than the retry budget.
        ///
        /// See ``WorkerConfiguration/retryBudget``. Nothing after the last checkpoint is stored, so a run started
        /// later resumes there.
        public static let unavailable = Code(.unavailable)
        /// The instance lost its partitions to the group's other members without knowing (a pause past the session
        /// timeout): what it had in hand since its last checkpoint is dropped, never written, and it goes on with
        /// whatever the group assigns it next.
        public static let fenced = Code(.fenced)
        /// A stop passed its deadline (`shutdownTimeoutMs`) and gave up waiting for Kafka or the disk: its last
        /// checkpoint or commit may be missing, so a restart replays from the last checkpoint stored (nothing is lost).
        public static let shutdown = Code(.shutdown)
    }

    public let code: Code
    /// What went wrong, in words, with the underlying error's own text.
    public let message: String
    /// The error that caused this one, when another module reported it: a ``KafkaError``, a
    /// ``StateStoreError``, a `CountryIndexError`.
    public let underlying: (any Error & Sendable)?

    /// - Parameters:
    ///   - code: what the worker was doing, as a code.
    ///   - message: what the worker was doing; the underlying error's text is appended.
    ///   - underlying: the error that caused this one, if another module reported it.
    package init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = underlying.map { "\(message): \($0)" } ?? message
        self.underlying = underlying
    }

    /// An error with exactly this message (the underlying error's text is not appended).
    package init(code: Code, message: String, underlying: (any Error & Sendable)?) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// Trying again later may succeed: the underlying Kafka or SQLite error says it is passing (a broker unreachable,
    /// the database busy).
    ///
    /// False when there is no underlying error to ask.
    public var isRetriable: Bool {
        switch underlying {
        case let kafka as KafkaError: return kafka.isRetriable
        case let store as StateStoreError: return store.isRetriable
        default: return false
        }
    }

    /// A checkpoint the disk refused (full, or failing): written nothing, and worth writing again later, as a
    /// delivery the broker refused is.
    public var isStorageFailure: Bool { (underlying as? StateStoreError)?.isStorageFailure ?? false }

    /// The checkpoint was not written, and going back to the last one and trying again may succeed: the broker
    /// refused a delivery, the disk refused the write, or the group had given the partitions to another member.
    public var isCheckpointRefusal: Bool { code == .delivery || code == .fenced || isStorageFailure }

    public var description: String { message }

    /// Errors are equal when their codes are: what the worker was doing decides what happens next, the words
    /// and the error underneath only explain it.
    public static func == (lhs: WorkerError, rhs: WorkerError) -> Bool { lhs.code == rhs.code }
}
