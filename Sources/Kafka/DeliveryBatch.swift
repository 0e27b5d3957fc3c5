import CRdKafka
import Foundation

/// The delivery reports of messages sent together, in the order they were given.
///
/// A stream worker waits for a batch to be durable before it records its progress: ``wait()`` (blocking)
/// or ``reports()`` (async) return once every message has its report. Each report says where the message
/// landed or why it failed; a failure never goes unreported.
public final class DeliveryBatch: @unchecked Sendable {
    /// Where librdkafka's per-message opaque pointer points: the batch and the message's place in it.
    struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        let index: Int
    }

    /// The number of messages in the batch.
    public let count: Int
    /// Where the messages went: each its own topic, or all one.
    private enum Topics {
        case each([String])
        case all(String)

        subscript(index: Int) -> String {
            switch self {
            case .each(let topics): topics[index]
            case .all(let topic): topic
            }
        }
    }
    private let topics: Topics
    let slots: UnsafeMutablePointer<Slot>

    // `results`, `pending` and `waiters` are guarded by `condition`.
    private let condition = NSCondition()
    private var results: [DeliveryReport?]
    private var pending: Int
    private var waiters: [CheckedContinuation<[DeliveryReport], Never>] = []
    /// Keeps the batch alive while librdkafka holds pointers into `slots`.
    private var keepAlive: Unmanaged<DeliveryBatch>?

    /// A batch of messages to these topics, in order.
    convenience init(topics: [String]) {
        self.init(count: topics.count, topics: .each(topics))
    }

    /// A batch of `count` messages to one topic.
    convenience init(topic: String, count: Int) {
        self.init(count: count, topics: .all(topic))
    }

    private init(count: Int, topics: Topics) {
        self.count = count
        self.topics = topics
        self.results = Array(repeating: nil, count: count)
        self.pending = count
        self.slots = .allocate(capacity: max(count, 1))
        guard count > 0 else { return }
        let retained = Unmanaged.passRetained(self)
        keepAlive = retained
        for index in 0..<count {
            (slots + index).initialize(to: Slot(batch: retained, index: index))
        }
    }

    deinit {
        slots.deinitialize(count: count)
        slots.deallocate()
    }

    /// True once every message has its report.
    public var isComplete: Bool {
        condition.lock()
        defer { condition.unlock() }
        return pending == 0
    }

    /// Blocks until every message has its report, then returns them in send order.
    @available(*, noasync, message: "blocks the calling thread; use reports() from async code")
    public func wait() -> [DeliveryReport] {
        condition.lock()
        defer { condition.unlock() }
        while pending > 0 { condition.wait() }
        return results.map { $0! }
    }

    /// Suspends until every message has its report, then returns them in send order.
    public func reports() async -> [DeliveryReport] {
        await withCheckedContinuation { continuation in
            condition.lock()
            if pending == 0 {
                let reports = results.map { $0! }
                condition.unlock()
                continuation.resume(returning: reports)
            } else {
                waiters.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Records the report of message `index`. Each message is reported exactly once.
    func complete(index: Int, partition: Int32, offset: Int64?, error: KafkaError?) {
        condition.lock()
        precondition(results[index] == nil, "message \(index) reported twice")
        results[index] = DeliveryReport(topic: topics[index], partition: partition, offset: offset, error: error)
        pending -= 1
        guard pending == 0 else {
            condition.unlock()
            return
        }
        let reports = results.map { $0! }
        let waiting = waiters
        waiters = []
        let retained = keepAlive
        keepAlive = nil
        condition.broadcast()
        condition.unlock()
        for waiter in waiting { waiter.resume(returning: reports) }
        retained?.release()
    }
}

/// librdkafka's delivery report callback (`dr_msg_cb`), run on the producer's polling thread.
func deliveryReportCallback(
    handle: OpaquePointer?,
    message: UnsafePointer<rd_kafka_message_t>?,
    opaque: UnsafeMutableRawPointer?
) {
    guard let message, let slotPointer = message.pointee._private else { return }
    let slot = slotPointer.assumingMemoryBound(to: DeliveryBatch.Slot.self).pointee
    let err = message.pointee.err
    let delivered = err == RD_KAFKA_RESP_ERR_NO_ERROR
    slot.batch.takeUnretainedValue().complete(
        index: slot.index,
        partition: message.pointee.partition,
        offset: delivered ? message.pointee.offset : nil,
        error: delivered ? nil : handle.map { KafkaError.resolvingFatal(err, handle: $0) } ?? KafkaError(err)
    )
}
