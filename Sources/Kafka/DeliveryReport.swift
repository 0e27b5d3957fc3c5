/// What became of one produced message.
public struct DeliveryReport: Hashable, Sendable, CustomStringConvertible {
    public let topic: String
    /// The partition the message went to (or was meant for, when it failed before one was chosen: -1).
    public let partition: Int32
    /// The offset the broker gave the message; nil when it was not delivered.
    public let offset: Int64?
    /// Why the message was not delivered; nil when it was.
    public let error: KafkaError?

    public var isDelivered: Bool { error == nil }

    public var description: String {
        if let error { return "\(topic)[\(partition)] failed: \(error)" }
        return "\(topic)[\(partition)]@\(offset ?? -1)"
    }
}
