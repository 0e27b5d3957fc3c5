import CRdKafka
public import PartitionOffsets

/// The messages one poll returned, in the order librdkafka delivered them (offset order within each
/// partition), plus what the poll learned about partition ends and errors.
///
/// The batch owns librdkafka's messages and releases them when it and every ``ConsumerRecord`` taken
/// from it are gone; payloads are never copied unless asked for.
public final class ConsumerBatch: RandomAccessCollection, @unchecked Sendable {
    // Immutable after init; the pointed-to messages are only read until deinit releases them.
    private let handle: KafkaHandle
    private let messages: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>
    /// Topic names by librdkafka topic handle, resolved once per batch rather than per record.
    private let topicNames: [(handle: OpaquePointer, name: String)]

    /// Partitions that this poll read to their current end (nothing more to read there for now).
    public let partitionsReachedEnd: [TopicPartition]
    /// Non-fatal errors the poll reported (a subscribed topic that does not exist, a broker that went away); librdkafka
    /// keeps retrying what can be retried.
    ///
    /// Fatal errors are thrown by the poll instead.
    public let errors: [KafkaError]

    public let startIndex = 0
    public let endIndex: Int

    /// Takes ownership of the first `count` messages of `messages`.
    init(
        handle: KafkaHandle,
        messages: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>,
        count: Int,
        partitionsReachedEnd: [TopicPartition],
        errors: [KafkaError]
    ) {
        self.handle = handle
        self.messages = messages
        self.endIndex = count
        self.partitionsReachedEnd = partitionsReachedEnd
        self.errors = errors
        var names: [(handle: OpaquePointer, name: String)] = []
        for index in 0..<count {
            let topic = messages[index]!.pointee.rkt!
            if !names.contains(where: { $0.handle == topic }) {
                names.append((topic, String(cString: rd_kafka_topic_name(topic))))
            }
        }
        self.topicNames = names
    }

    deinit {
        for index in 0..<endIndex { rd_kafka_message_destroy(messages[index]) }
        messages.deallocate()
    }

    public subscript(position: Int) -> ConsumerRecord {
        precondition(position >= 0 && position < endIndex, "record index out of range")
        return ConsumerRecord(batch: self, message: messages[position]!)
    }

    func topicName(_ topic: OpaquePointer?) -> String {
        topicNames.first { $0.handle == topic }?.name ?? ""
    }
}
