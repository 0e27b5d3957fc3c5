import CRdKafka
import Foundation
public import PartitionOffsets

/// The delivery reports of messages sent together, in the order they were given.
///
/// A stream worker waits for a batch to be durable before it records its progress: ``wait()`` (blocking)
/// or ``reports()`` (async) return once every message has its report. Each report says where the message
/// landed or why it failed; a failure never goes unreported.
public final class DeliveryBatch: @unchecked Sendable {
    // @unchecked: each slot's outcome is written once, by whoever reports its message, under `condition`;
    // `errors`, `pending`, `waiters` and `keepAlive` are guarded by it too.

    /// Where librdkafka's per-message opaque pointer points: the batch, the message's place in it, and where
    /// it landed once reported.
    ///
    /// The outcome lives here rather than as a ``DeliveryReport`` per message: a worker's checkpoint covers
    /// hundreds of thousands of events, and a report each (its topic name retained, copied into the result
    /// array, copied again for the waiter) was work on the delivery thread and the checkpoint's for messages
    /// whose only news is that they arrived.
    struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        let index: Int
        var isReported = false
        var partition: Int32 = -1
        /// Nil unless delivered.
        var offset: Int64?
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

    /// The topic of the message at `index`.
    func topic(at index: Int) -> String { topics[index] }

    private let condition = NSCondition()
    /// Why each message that was not delivered failed, by its index.
    private var errors: [Int: KafkaError] = [:]
    private var pending: Int
    private var waiters: [CheckedContinuation<[DeliveryReport], Never>] = []
    /// Keeps the batch alive while librdkafka holds pointers into `slots`.
    private var keepAlive: Unmanaged<DeliveryBatch>?

    /// A batch of messages to these topics, in order.
    convenience init(topics: [String]) {
        // One name for all, when it is (a checkpoint's changelog records): no array of names to keep.
        if let first = topics.first, topics.allSatisfy({ $0 == first }) {
            self.init(count: topics.count, topics: .all(first))
        } else {
            self.init(count: topics.count, topics: .each(topics))
        }
    }

    /// A batch of `count` messages to one topic.
    convenience init(topic: String, count: Int) {
        self.init(count: count, topics: .all(topic))
    }

    private init(count: Int, topics: Topics) {
        self.count = count
        self.topics = topics
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
        return allReports()
    }

    /// Blocks until every message has its report, then returns the reports of those that were not delivered, in send
    /// order: none when every one was.
    ///
    /// What a writer that only goes on once all arrived needs, without a report made for each message that did.
    @available(*, noasync, message: "blocks the calling thread")
    public func waitForRefusals() -> [DeliveryReport] {
        condition.lock()
        defer { condition.unlock() }
        while pending > 0 { condition.wait() }
        return errors.keys.sorted().map { report(at: $0) }
    }

    /// Blocks until every message has its report, then returns for each partition of each topic where the delivered
    /// messages landed: the first offset, the offset after the last, and how many.
    ///
    /// A writer that must know whether someone else wrote between its messages (a gap) compares the count with the
    /// span (``OffsetSpan/isContiguous``).
    @available(*, noasync, message: "blocks the calling thread")
    public func waitForSpans() -> [TopicPartition: OffsetSpan] {
        condition.lock()
        defer { condition.unlock() }
        while pending > 0 { condition.wait() }
        guard case .all(let topic) = topics else {
            var spans: [TopicPartition: OffsetSpan] = [:]
            for index in 0..<count {
                guard let offset = slots[index].offset, offset >= 0 else { continue }
                OffsetSpan.include(offset, in: &spans[TopicPartition(topics[index], slots[index].partition)])
            }
            return spans
        }
        // One topic (a checkpoint's changelog records): by partition number, without hashing its name per message.
        var spans: [Int32: OffsetSpan] = [:]
        for index in 0..<count {
            guard let offset = slots[index].offset, offset >= 0 else { continue }
            OffsetSpan.include(offset, in: &spans[slots[index].partition])
        }
        return Dictionary(uniqueKeysWithValues: spans.map { (TopicPartition(topic, $0.key), $0.value) })
    }

    /// Suspends until every message has its report, then returns them in send order.
    public func reports() async -> [DeliveryReport] {
        await withCheckedContinuation { continuation in
            condition.lock()
            if pending == 0 {
                let reports = allReports()
                condition.unlock()
                continuation.resume(returning: reports)
            } else {
                waiters.append(continuation)
                condition.unlock()
            }
        }
    }

    /// Records the report of message `index`.
    ///
    /// Each message is reported exactly once.
    func complete(index: Int, partition: Int32, offset: Int64?, error: KafkaError?) {
        condition.lock()
        precondition(!slots[index].isReported, "message \(index) reported twice")
        slots[index].isReported = true
        slots[index].partition = partition
        slots[index].offset = offset
        if let error { errors[index] = error }
        pending -= 1
        guard pending == 0 else {
            condition.unlock()
            return
        }
        let waiting = waiters
        let reports = waiting.isEmpty ? [] : allReports()
        waiters = []
        let retained = keepAlive
        keepAlive = nil
        condition.broadcast()
        condition.unlock()
        for waiter in waiting { waiter.resume(returning: reports) }
        retained?.release()
    }

    /// Every message's report, in send order; with `condition` held, once all are in.
    private func allReports() -> [DeliveryReport] {
        (0..<count).map { report(at: $0) }
    }

    private func report(at index: Int) -> DeliveryReport {
        DeliveryReport(
            topic: topics[index],
            partition: slots[index].partition,
            offset: slots[index].offset,
            error: errors[index]
        )
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
    if delivered, let context = ClientContext.of(handle), context.transactionOffsets != nil {
        context.noteInTransaction(
            TopicPartition(slot.batch.takeUnretainedValue().topic(at: slot.index), message.pointee.partition),
            offset: message.pointee.offset
        )
    }
    slot.batch.takeUnretainedValue().complete(
        index: slot.index,
        partition: message.pointee.partition,
        offset: delivered ? message.pointee.offset : nil,
        error: delivered ? nil : handle.map { KafkaError.resolvingFatal(err, handle: $0) } ?? KafkaError(err)
    )
}
