/// Why a message could not be decoded: data, not an exception.
///
/// `reason` is a short stable code for metrics labels; `description` says what was wrong in words, for the dead-letter
/// header.
public struct DecodingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: String, Hashable, Sendable {
        /// Not JSON text (RFC 8259) at all.
        case invalidJSON = "invalid-json"
        /// JSON, but not an object.
        case notAnObject = "not-an-object"
        /// A required field is absent (or null).
        case missingField = "missing-field"
        /// A field has the wrong type or a value out of range.
        case invalidField = "invalid-field"
        /// A command whose `type` geoworker does not know.
        case unknownCommand = "unknown-command"
    }

    public let reason: Reason
    public let description: String

    public init(_ reason: Reason, _ description: String) {
        self.reason = reason
        self.description = description
    }

    static func missing(_ field: String) -> DecodingFailure {
        DecodingFailure(.missingField, "\(field) is required")
    }

    static func invalid(_ field: String, _ requirement: String) -> DecodingFailure {
        DecodingFailure(.invalidField, "\(field) \(requirement)")
    }
}
