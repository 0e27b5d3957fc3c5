/// Why the worker stopped or could not start.
public struct WorkerError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A topic is missing, or the input topics are not co-partitioned.
        public static let topics = Code("topics")
        /// Kafka refused the configuration or the client failed.
        public static let kafka = Code("kafka")
        /// Events or dead letters could not be delivered; nothing after them was persisted.
        public static let delivery = Code("delivery")
        /// The state directory could not be opened or written.
        public static let state = Code("state")
        /// A setting (flag, environment variable or config file) has a value the worker cannot use.
        public static let configuration = Code("configuration")
        /// The bundled country index could not be read.
        public static let countries = Code("countries")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
