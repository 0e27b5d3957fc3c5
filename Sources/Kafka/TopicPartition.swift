/// One partition of one topic.
public struct TopicPartition: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(_ topic: String, _ partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }

    public static func < (lhs: TopicPartition, rhs: TopicPartition) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }
}

/// Where a consumer starts reading a partition it was given.
public enum StartOffset: Hashable, Sendable {
    /// The oldest message the broker still has.
    case beginning
    /// Only messages produced from now on.
    case end
    /// This exact offset: the offset of the next message to read.
    case offset(Int64)

    var rawValue: Int64 {
        switch self {
        case .beginning: return -2  // RD_KAFKA_OFFSET_BEGINNING
        case .end: return -1  // RD_KAFKA_OFFSET_END
        case .offset(let offset): return offset
        }
    }
}
