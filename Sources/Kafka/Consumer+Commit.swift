import CRdKafka

/// A commit that waits for the group coordinator's answer, within a bound.
///
/// librdkafka's synchronous commit waits without a limit, and a commit sent to a coordinator that went down before
/// answering is retried until one answers (librdkafka issue 3740): a membership check or a stop's last commit in an
/// outage would wait for ever. This commit posts its answer to a queue of its own and waits for it at most
/// ``Consumer/groupAnswerLimit``, or until its caller gives up; an answer that comes later is dropped with the queue.
extension Consumer {
    /// Sends a commit of `list` (nil: the stored offsets) and waits for the answer, asking `giveUp` every 0.1 s.
    ///
    /// - Throws: ``KafkaError`` with the answer's error, the first partition's refusal, or `timedOut`.
    func commitWaitingForAnswer(
        _ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
        operation: String,
        giveUpWhen giveUp: () -> Bool
    ) throws(KafkaError) {
        guard let queue = rd_kafka_queue_new(handle.pointer) else {
            throw KafkaError(code: .invalidState, message: "\(operation): librdkafka gave no queue for the answer")
        }
        defer { rd_kafka_queue_destroy(queue) }
        let sent = rd_kafka_commit_queue(handle.pointer, list, queue, nil, nil)
        guard sent == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(sent, operation) }
        let deadline = ContinuousClock.now + groupAnswerLimit
        while case let remaining = deadline - ContinuousClock.now, remaining > .zero, !giveUp() {
            let waitMs = Int32(clamping: max(1, min(100, remaining.wholeMilliseconds)))
            guard let event = rd_kafka_queue_poll(queue, waitMs) else { continue }
            defer { rd_kafka_event_destroy(event) }
            guard rd_kafka_event_type(event) == RD_KAFKA_EVENT_OFFSET_COMMIT else { continue }
            let err = rd_kafka_event_error(event)
            // Committing the stored offsets when none were stored since the last commit is no failure.
            if list == nil && err == RD_KAFKA_RESP_ERR__NO_OFFSET { return }
            guard let answered = rd_kafka_event_topic_partition_list(event) else {
                throw KafkaError(err == RD_KAFKA_RESP_ERR_NO_ERROR ? RD_KAFKA_RESP_ERR__BAD_MSG : err, operation)
            }
            if err == RD_KAFKA_RESP_ERR_NO_ERROR { state.didCommit(answered) }
            try Self.check(err, list: answered, operation: operation)
            return
        }
        throw KafkaError(
            code: .timedOut,
            message: ContinuousClock.now < deadline
                ? "\(operation): the wait for the group coordinator's answer was given up"
                : "\(operation): no answer from the group coordinator within \(groupAnswerLimit)"
        )
    }
}
