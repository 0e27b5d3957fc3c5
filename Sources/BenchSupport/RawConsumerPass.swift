// What the benchmarks share: raw librdkafka consumption (the reference figures are measured against) and
// small statistics helpers.
import CRdKafka

/// One measured pass: how many messages, how long from the first message to the last, and a checksum
/// of the payload bytes so neither side can skip the work.
public struct Pass: Sendable {
    public let messages: Int
    public let seconds: Double
    public let payloadBytes: Int
    public var rate: Double { Double(messages) / seconds }

    public init(messages: Int, seconds: Double, payloadBytes: Int) {
        self.messages = messages
        self.seconds = seconds
        self.payloadBytes = payloadBytes
    }
}

/// How the raw pass calls `rd_kafka_consume_batch_queue`.
public enum RawPattern: Sendable {
    /// As the Swift `Consumer` does: take what is ready without waiting, block only when nothing is.
    /// The reference for the ratio, so that the ratio measures the Swift layer and nothing else.
    case drainReady
    /// One call with a timeout, which waits until the whole array is filled (or the timeout passes).
    case fillBatch
}

/// Reads every message with librdkafka's C API alone: the reference the Swift layer is measured against.
///
/// Assigns every partition of `topic` from its beginning (no group) and reads until `messages` have come;
/// the time runs from the first message to the last.
public func rawPass(
    bootstrap: String,
    topic: String,
    partitions: Int32,
    messages expected: Int,
    pattern: RawPattern
) -> Pass {
    var errorText = [CChar](repeating: 0, count: 512)
    let conf = rd_kafka_conf_new()
    for (key, value) in [("bootstrap.servers", bootstrap), ("group.id", "bench-raw"), ("enable.auto.commit", "false")] {
        guard rd_kafka_conf_set(conf, key, value, &errorText, errorText.count) == RD_KAFKA_CONF_OK else {
            fatalError("raw config \(key)")
        }
    }
    guard let consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, &errorText, errorText.count) else {
        fatalError("raw consumer")
    }
    rd_kafka_poll_set_consumer(consumer)
    let list = rd_kafka_topic_partition_list_new(partitions)!
    for partition in 0..<partitions {
        rd_kafka_topic_partition_list_add(list, topic, partition).pointee.offset = -2  // beginning
    }
    rd_kafka_assign(consumer, list)
    rd_kafka_topic_partition_list_destroy(list)
    let queue = rd_kafka_queue_get_consumer(consumer)!

    let capacity = 10_000
    let messages = UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>.allocate(capacity: capacity)
    defer { messages.deallocate() }
    var count = 0
    var bytes = 0
    var start: ContinuousClock.Instant?
    while count < expected {
        var received: Int
        switch pattern {
        case .fillBatch:
            received = rd_kafka_consume_batch_queue(queue, 1000, messages, capacity)
        case .drainReady:
            received = rd_kafka_consume_batch_queue(queue, 0, messages, capacity)
            if received == 0 {
                received = rd_kafka_consume_batch_queue(queue, 1000, messages, 1)
                if received == 1 {
                    received += max(0, rd_kafka_consume_batch_queue(queue, 0, messages + 1, capacity - 1))
                }
            }
        }
        if received > 0 && start == nil { start = .now }
        for index in 0..<max(received, 0) {
            let message = messages[index]!
            if message.pointee.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                count += 1
                bytes += message.pointee.len
            }
            rd_kafka_message_destroy(message)
        }
    }
    let elapsed = ContinuousClock.now - start!
    rd_kafka_queue_destroy(queue)
    rd_kafka_consumer_close(consumer)
    rd_kafka_destroy(consumer)
    return Pass(messages: count, seconds: elapsed.seconds, payloadBytes: bytes)
}

extension Duration {
    /// The duration in seconds.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// The middle value (the upper middle for an even count).
public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}
