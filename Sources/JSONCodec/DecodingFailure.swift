/// Why a message could not be decoded: data, not an exception.
///
/// `reason` is a short stable code for metrics labels; `description` says what was wrong in words, for the dead-letter
/// header.
public struct DecodingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// A short stable code: the codec's own below; a message format adds its own (an unknown command type).
    public struct Reason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        public var description: String { rawValue }

        /// Not JSON text (RFC 8259) at all.
        public static let invalidJSON = Reason(rawValue: "invalid-json")
        /// JSON, but not an object.
        public static let notAnObject = Reason(rawValue: "not-an-object")
        /// A required field is absent (or null).
        public static let missingField = Reason(rawValue: "missing-field")
        /// A field has the wrong type or a value out of range.
        public static let invalidField = Reason(rawValue: "invalid-field")
    }

    public let reason: Reason
    public let description: String

    public init(_ reason: Reason, _ description: String) {
        self.reason = reason
        self.description = description
    }

    package static func missing(_ field: String) -> DecodingFailure {
        DecodingFailure(.missingField, "\(field) is required")
    }

    package static func invalid(_ field: String, _ requirement: String) -> DecodingFailure {
        DecodingFailure(.invalidField, "\(field) \(requirement)")
    }
}
