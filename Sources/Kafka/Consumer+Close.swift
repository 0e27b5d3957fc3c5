import CRdKafka
import Logging

/// Closing a consumer: the last revocation, leaving the group, within a bound.
///
/// librdkafka's own blocking close waits for the group coordinator to answer, and with no broker answering it waits
/// for ever (librdkafka issue 3740). The close here runs the same steps in the background and serves their events
/// until they are done, the group's session timeout has passed (the group forgets the member then anyway), or the
/// caller gives up; a close left unfinished is not started again when the client is destroyed.
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
    /// closed, ``closeLimit`` has passed, or `giveUp` says so (checked every 0.1 s).
    ///
    /// - Returns: whether the consumer left the group cleanly; false when it was given up (the group takes its
    ///   partitions back at the session timeout) or was closed before.
    @discardableResult
    func closeNow(giveUpWhen giveUp: () -> Bool = { false }) -> Bool {
        guard !isClosed.exchange(true) else { return false }
        let queue = rd_kafka_queue_new(handle.pointer)
        defer { rd_kafka_queue_destroy(queue) }
        if let error = rd_kafka_consumer_close_queue(handle.pointer, queue) {
            let code = rd_kafka_error_code(error)
            rd_kafka_error_destroy(error)
            logger.warning("Consumer close was refused", metadata: [KafkaLogKey.kafkaError: "\(KafkaError(code))"])
            handle.skipConsumerCloseOnDestroy()
            return false
        }
        let deadline = ContinuousClock.now + closeLimit
        while rd_kafka_consumer_closed(handle.pointer) == 0 {
            guard ContinuousClock.now < deadline, !giveUp() else {
                logger.warning(
                    "Consumer closed without leaving its group: the group did not answer in time",
                    metadata: [KafkaLogKey.waited: "\(closeLimit)"]
                )
                handle.skipConsumerCloseOnDestroy()
                return false
            }
            if let event = rd_kafka_queue_poll(queue, 100) { serveCloseEvent(event) }
        }
        return true
    }

    /// A rebalance met while closing goes to the consumer's rebalance callback, as in a poll; anything else the close
    /// reports is done with once seen.
    private func serveCloseEvent(_ event: OpaquePointer) {
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
