import CRdKafka
public import PartitionOffsets

/// One consumed message: a view into its ``ConsumerBatch``, which it keeps alive.
///
/// Key and value are read in place through ``withValue(_:)`` and ``withKey(_:)``; ``value`` and
/// ``key`` copy them out.
public struct ConsumerRecord: @unchecked Sendable {
    // Immutable, and valid for as long as `batch` lives, which this record ensures.
    let batch: ConsumerBatch
    let message: UnsafeMutablePointer<rd_kafka_message_t>

    public var topic: String { batch.topicName(message.pointee.rkt) }
    public var partition: Int32 { message.pointee.partition }
    public var offset: Int64 { message.pointee.offset }
    public var topicPartition: TopicPartition { TopicPartition(topic, partition) }

    /// The message timestamp in milliseconds since the epoch (create or log-append time, per the topic),
    /// or nil when the message has none.
    public var timestampMilliseconds: Int64? {
        let timestamp = rd_kafka_message_timestamp(message, nil)
        return timestamp >= 0 ? timestamp : nil
    }

    /// Calls `body` with the payload bytes in place (nil for a null value).
    ///
    /// The bytes are valid only during the call.
    public func withValue<R, E: Error>(_ body: (UnsafeRawBufferPointer?) throws(E) -> R) throws(E) -> R {
        guard let payload = message.pointee.payload else { return try body(nil) }
        return try withExtendedLifetime(batch) { () throws(E) -> R in
            try body(UnsafeRawBufferPointer(start: payload, count: message.pointee.len))
        }
    }

    /// Calls `body` with the key bytes in place (nil when the message has no key).
    ///
    /// The bytes are valid only during the call.
    public func withKey<R, E: Error>(_ body: (UnsafeRawBufferPointer?) throws(E) -> R) throws(E) -> R {
        guard let key = message.pointee.key else { return try body(nil) }
        return try withExtendedLifetime(batch) { () throws(E) -> R in
            try body(UnsafeRawBufferPointer(start: key, count: message.pointee.key_len))
        }
    }

    /// Calls `body` with the key and the payload bytes in place (nil for no key, a null value): for the hot path, one
    /// call rather than two nested ones.
    ///
    /// The bytes are valid only during the call.
    public func withKeyAndValue<Result>(
        _ body: (_ key: UnsafeRawBufferPointer?, _ value: UnsafeRawBufferPointer?) -> Result
    ) -> Result {
        // `self` (and so `batch`, which owns the bytes) is alive for the whole call: the caller lends it.
        let message = message.pointee
        return body(
            message.key.map { UnsafeRawBufferPointer(start: $0, count: message.key_len) },
            message.payload.map { UnsafeRawBufferPointer(start: $0, count: message.len) }
        )
    }

    /// ``withKeyAndValue(_:)`` for a record read in place, in memory the caller keeps alive (a buffer of records it
    /// owns) for the whole call.
    ///
    /// A call on the record itself retains and releases the record's batch around it, and a batch's count is shared by
    /// every thread holding its records: on an apply thread, one contended atomic increment and decrement per message.
    public static func withKeyAndValue<Result>(
        ofRecordAt record: UnsafePointer<ConsumerRecord>,
        _ body: (_ key: UnsafeRawBufferPointer?, _ value: UnsafeRawBufferPointer?) -> Result
    ) -> Result {
        let message = record.pointee.message.pointee
        return body(
            message.key.map { UnsafeRawBufferPointer(start: $0, count: message.key_len) },
            message.payload.map { UnsafeRawBufferPointer(start: $0, count: message.len) }
        )
    }

    /// A copy of the payload; nil for a null value (a tombstone).
    public var value: [UInt8]? { withValue { $0.map { Array($0) } } }

    /// A copy of the key; nil when the message has none.
    public var key: [UInt8]? { withKey { $0.map { Array($0) } } }

    /// The headers, in the order the producer added them.
    public var headers: [KafkaHeader] {
        var headerList: OpaquePointer?
        guard rd_kafka_message_headers(message, &headerList) == RD_KAFKA_RESP_ERR_NO_ERROR, let headerList else {
            return []
        }
        var result: [KafkaHeader] = []
        var index = 0
        var name: UnsafePointer<CChar>?
        var value: UnsafeRawPointer?
        var size = 0
        while rd_kafka_header_get_all(headerList, index, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
            let bytes = value.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
            result.append(KafkaHeader(name: name.map { String(cString: $0) } ?? "", value: bytes))
            index += 1
        }
        return result
    }
}
