/// A message to produce.
public struct ProducerRecord: Sendable {
    public var topic: String
    /// The partition, or nil to let the partitioner choose from the key (librdkafka's default
    /// `consistent_random`: the same key always lands in the same partition).
    public var partition: Int32?
    public var key: [UInt8]?
    /// The payload; nil produces a tombstone (null value), as compacted topics use for deletes.
    public var value: [UInt8]?
    public var headers: [KafkaHeader]
    /// Message timestamp in milliseconds since the epoch; nil lets librdkafka stamp the send time.
    public var timestampMilliseconds: Int64?

    public init(
        topic: String,
        partition: Int32? = nil,
        key: [UInt8]? = nil,
        value: [UInt8]?,
        headers: [KafkaHeader] = [],
        timestampMilliseconds: Int64? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
    }

    /// A record with a UTF-8 key and value.
    public init(topic: String, partition: Int32? = nil, key: String?, value: String, headers: [KafkaHeader] = []) {
        self.init(
            topic: topic,
            partition: partition,
            key: key.map { Array($0.utf8) },
            value: Array(value.utf8),
            headers: headers
        )
    }
}

/// A Kafka record header: a name and optional bytes.
public struct KafkaHeader: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: [UInt8]?

    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    public init(name: String, value: String) {
        self.init(name: name, value: Array(value.utf8))
    }

    /// The value read as UTF-8, or nil for a header without a value.
    public var stringValue: String? { value.map { String(decoding: $0, as: UTF8.self) } }

    public var description: String { "\(name)=\(stringValue ?? "<null>")" }
}
