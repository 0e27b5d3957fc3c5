/// An input partition whose progress the store records.
public struct PartitionKey: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let topic: String
    public let partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }

    public static func < (lhs: PartitionKey, rhs: PartitionKey) -> Bool {
        (lhs.topic, lhs.partition) < (rhs.topic, rhs.partition)
    }
}
