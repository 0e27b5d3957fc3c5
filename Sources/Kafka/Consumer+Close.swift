import CRdKafka
import Logging
import Threads

/// Closing a consumer: the last revocation, leaving the group, within a bound.
///
/// librdkafka's own blocking close waits for the group coordinator, and for ever for a commit sent to a coordinator
/// that went down before answering (librdkafka issue 3740; destroying the client waits for the same). The close here
/// runs the same steps in the background and serves their events on the caller's thread until they are done, the
/// group's session timeout has passed (the group forgets the member then anyway), or the caller gives up; then a thread
/// of its own goes on serving them and destroys the client once librdkafka lets it go (or never, in a process that
/// exits first).
extension Consumer {
    /// Leaves the group (the revoke hook runs for the partitions held), commits nothing by itself, and stops the
    /// consumer; waits at most the session timeout for the group to answer.
    ///
    /// Later polls throw `invalidState`.
    @available(*, noasync, message: "blocks the calling thread; use the async close")
    public func close() {
        closeNow()
    }

    /// Runs the close, serving its events on this thread (the rebalance hooks among them) until the consumer is
    /// closed, ``groupAnswerLimit`` has passed, or `giveUp` says so (asked every 0.1 s).
    ///
    /// - Returns: whether the consumer left its group here; false when the close was left to a thread of its own
    ///   (a revocation it serves runs the consumer's own handler) or the consumer was closed before.
    @discardableResult
    func closeNow(giveUpWhen giveUp: () -> Bool = { false }) -> Bool {
        guard !isClosed.exchange(true) else { return false }
        guard let queue = rd_kafka_queue_new(handle.pointer) else { return false }
        if let error = rd_kafka_consumer_close_queue(handle.pointer, queue) {
            let code = rd_kafka_error_code(error)
            rd_kafka_error_destroy(error)
            rd_kafka_queue_destroy(queue)
            logger.warning("Consumer close was refused", metadata: [KafkaLogKey.kafkaError: "\(KafkaError(code))"])
            return false
        }
        let started = ContinuousClock.now
        while rd_kafka_consumer_closed(handle.pointer) == 0 {
            guard ContinuousClock.now - started < groupAnswerLimit, !giveUp() else {
                logger.warning(
                    "Consumer closing in the background: its group did not answer in time, or the stop was cancelled",
                    metadata: [KafkaLogKey.waited: "\(ContinuousClock.now - started)"]
                )
                Self.finishInBackground(handle, queue: UnsafeQueue(pointer: queue))
                return false
            }
            Self.serveCloseEvent(from: queue, handle: handle, timeoutMs: 100)
        }
        rd_kafka_queue_destroy(queue)
        return true
    }

    /// Serves the close's events on a thread of its own until the consumer is closed; the client is destroyed there
    /// when its last reference goes.
    private static func finishInBackground(_ handle: KafkaHandle, queue: UnsafeQueue) {
        let thread = DedicatedThread(name: "kafka-close")
        thread.execute {
            while rd_kafka_consumer_closed(handle.pointer) == 0 {
                serveCloseEvent(from: queue.pointer, handle: handle, timeoutMs: 1_000)
            }
            rd_kafka_queue_destroy(queue.pointer)
            // Its only job done, the thread ends (a job may stop its own thread without waiting for itself).
            thread.stop()
        }
    }

    /// A rebalance met while closing goes to the consumer's rebalance callback, as in a poll; anything else the close
    /// reports is done with once seen.
    private static func serveCloseEvent(from queue: OpaquePointer, handle: KafkaHandle, timeoutMs: Int32) {
        guard let event = rd_kafka_queue_poll(queue, timeoutMs) else { return }
        defer { rd_kafka_event_destroy(event) }
        guard rd_kafka_event_type(event) == RD_KAFKA_EVENT_REBALANCE else { return }
        rebalanceCallback(
            handle: handle.pointer,
            err: rd_kafka_event_error(event),
            partitions: rd_kafka_event_topic_partition_list(event),
            opaque: nil
        )
    }
}

/// A close's event queue handed to the thread that finishes the close, which alone uses it from then on.
private struct UnsafeQueue: @unchecked Sendable {
    let pointer: OpaquePointer
}
