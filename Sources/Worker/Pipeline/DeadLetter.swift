import Crypto
import Foundation
import GeoCore
import Kafka

/// A message the worker cannot use, as a record for the dead-letter topic: its original key and bytes, why
/// it was refused, and where it came from.
///
/// Input topics often accept larger messages than the producer may send (its `message.max.bytes`), and one
/// record the producer refuses must never stop the worker. So a value or key over its limit is cut to its
/// first bytes, and headers say so, with the original's size and SHA-256: enough to find the original on
/// its input topic (the origin header) and to prove a copy is the one.
public enum DeadLetter {
    /// Header names on dead-letter records.
    public enum Header {
        /// A short stable code: a decoding reason (`invalid-json`, `missing-field`, ...), `empty-message` or
        /// `rejected`.
        public static let reason = "geoworker-reason"
        /// What was wrong, in words.
        public static let error = "geoworker-error"
        /// Where the message came from: `topic:partition:offset`.
        public static let origin = "geoworker-origin"
        /// `true` when the value is only the first ``DeadLetter/Limits/maxValueBytes`` of the original.
        public static let truncated = "geoworker-truncated"
        /// The original value's size in bytes (decimal), on a truncated record.
        public static let originalSize = "geoworker-original-size"
        /// The SHA-256 of the whole original value (lowercase hex), on a truncated record.
        public static let originalSHA256 = "geoworker-original-sha256"
        /// The same three for a key cut to ``DeadLetter/Limits/maxKeyBytes``.
        public static let keyTruncated = "geoworker-key-truncated"
        public static let originalKeySize = "geoworker-original-key-size"
        public static let originalKeySHA256 = "geoworker-original-key-sha256"
    }

    /// How much of a refused message a dead-letter record carries.
    public struct Limits: Hashable, Sendable {
        /// The most bytes of the original value kept.
        ///
        /// Default: what fits under librdkafka's default `message.max.bytes` (1,000,000) beside the largest key and
        /// headers (``defaults(messageMaxBytes:)``).
        public var maxValueBytes: Int
        /// The most bytes of the original key kept.
        ///
        /// Default: 16,384.
        public var maxKeyBytes: Int

        public init(maxValueBytes: Int = Self.defaults().maxValueBytes, maxKeyBytes: Int = Self.defaultKeyBytes) {
            self.maxValueBytes = maxValueBytes
            self.maxKeyBytes = maxKeyBytes
        }

        public static let defaultKeyBytes = 16_384
        /// Room left for the headers (the error text is short) and the record's framing.
        public static let headroom = 16_384

        /// The limits that fit a producer whose `message.max.bytes` is this: the largest key, the headroom,
        /// and the rest for the value.
        public static func defaults(messageMaxBytes: Int = 1_000_000) -> Limits {
            let key = min(defaultKeyBytes, messageMaxBytes / 8)
            return Limits(maxValueBytes: max(1, messageMaxBytes - key - headroom), maxKeyBytes: key)
        }
    }

    /// The dead-letter record of a message.
    ///
    /// - Parameters:
    ///   - topic: the dead-letter topic.
    ///   - value: the message's bytes as they came (nil for none).
    ///   - key: the message's key as it came (nil for none).
    ///   - origin: where the message was read.
    ///   - reason: a short stable code for the header and the metric label.
    ///   - error: what was wrong, in words.
    ///   - limits: how much of the value and key the record may carry.
    /// - Returns: the record, its value and key cut to the limits (and the headers saying so).
    static func record(
        topic: String,
        value: UnsafeRawBufferPointer?,
        key: UnsafeRawBufferPointer?,
        origin: MessageOrigin,
        reason: String,
        error: String,
        limits: Limits
    ) -> ProducerRecord {
        var headers = [
            KafkaHeader(name: Header.reason, value: reason),
            KafkaHeader(name: Header.error, value: error),
            KafkaHeader(name: Header.origin, value: "\(origin.topic):\(origin.partition):\(origin.offset)"),
        ]
        let keptValue = value.map {
            kept(
                $0,
                limit: limits.maxValueBytes,
                headers: &headers,
                Header.truncated,
                Header.originalSize,
                Header.originalSHA256
            )
        }
        let keptKey = key.map {
            kept(
                $0,
                limit: limits.maxKeyBytes,
                headers: &headers,
                Header.keyTruncated,
                Header.originalKeySize,
                Header.originalKeySHA256
            )
        }
        return ProducerRecord(topic: topic, key: keptKey, value: keptValue, headers: headers)
    }

    /// The bytes, or their first `limit` with the three headers that say what was cut.
    private static func kept(
        _ bytes: UnsafeRawBufferPointer,
        limit: Int,
        headers: inout [KafkaHeader],
        _ truncated: String,
        _ originalSize: String,
        _ originalSHA256: String
    ) -> [UInt8] {
        guard bytes.count > limit else { return Array(bytes) }
        var hash = SHA256()
        hash.update(bufferPointer: bytes)
        headers += [
            KafkaHeader(name: truncated, value: "true"),
            KafkaHeader(name: originalSize, value: "\(bytes.count)"),
            KafkaHeader(name: originalSHA256, value: hash.finalize().map { String(format: "%02x", $0) }.joined()),
        ]
        return Array(bytes.prefix(limit))
    }
}
