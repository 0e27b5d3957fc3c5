import CRdKafka
public import Logging
public import PartitionOffsets
import Synchronization
import Threads

/// Consumes Kafka topics through librdkafka, in batches, with offsets under the caller's control.
///
/// A consumer either joins a consumer group (``Subscription/group(topics:)``), sharing the topics'
/// partitions with the group's other members and following its rebalances through a
/// ``RebalanceHandler``, or reads partitions it names itself (``Subscription/partitions(_:)``).
///
/// Offsets are stored and committed only when the caller says so. The blocking API (``poll(maxMessages:timeout:)``,
/// ``commit(_:)``, ``close()``) is for a thread the caller dedicates to the consumer; the async API does
/// the same work on the consumer's own thread, never on Swift's cooperative pool. Use one of the two.
/// Close the consumer before letting it go: a consumer released unclosed closes in `deinit`, which blocks
/// the thread that releases it while it leaves the group.
public final class Consumer: Sendable {
    /// What the consumer reads.
    public enum Subscription: Sendable {
        /// Join the configured consumer group and read the partitions it assigns from these topics.
        case group(topics: [String])
        /// Read exactly these partitions, each from its start offset, outside any group rebalancing.
        case partitions([TopicPartition: StartOffset])
    }

    let handle: KafkaHandle
    let state: ConsumerState
    let logger: Logger
    /// The consumer's own thread, where the async API runs the blocking calls (``Consumer+Async.swift``).
    let thread: DedicatedThread
    let isClosed = AtomicFlag(false)
    /// How long a commit or a close waits for the group to answer: the session timeout, after which the group would
    /// have dropped a member it had not heard from anyway.
    let groupAnswerLimit: Duration

    /// Creates a consumer and subscribes it.
    ///
    /// - Parameters:
    ///   - configuration: the brokers, the group and librdkafka's properties.
    ///   - subscription: a group's topics, or partitions named outright.
    ///   - rebalanceHandler: hooks run when the group assigns or revokes partitions (group mode only).
    ///   - logger: where librdkafka's logs and the consumer's go.
    /// - Throws: ``KafkaError`` when a property is refused, librdkafka cannot start the client, or the
    ///   subscription is refused (for example an empty topic list).
    public init(
        configuration: ConsumerConfiguration,
        subscription: Subscription,
        rebalanceHandler: RebalanceHandler = RebalanceHandler(),
        logger: Logger = Logger(label: "geoworker.kafka.consumer")
    ) throws(KafkaError) {
        let state = ConsumerState()
        self.state = state
        self.logger = logger
        self.groupAnswerLimit = configuration.effectiveSessionTimeout
        let context = ClientContext(
            logger: logger,
            rebalance: { handle, err, partitions in
                state.rebalance(
                    handle: handle,
                    err: err,
                    partitions: partitions,
                    handler: rebalanceHandler,
                    logger: logger
                )
            },
            committed: { state.didCommit($0) }
        )
        self.handle = try KafkaHandle(
            kind: RD_KAFKA_CONSUMER,
            properties: configuration.librdkafkaProperties,
            context: context,
            configure: {
                rd_kafka_conf_set_rebalance_cb($0, rebalanceCallback)
                rd_kafka_conf_set_offset_commit_cb($0, offsetCommitCallback)
            }
        )
        self.thread = DedicatedThread(name: "kafka-consumer")

        switch subscription {
        case .group(let topics):
            guard !topics.isEmpty else {
                throw KafkaError(code: .invalidArgument, message: "a group subscription needs at least one topic")
            }
            let list = TopicPartition.makeList(topics.map { (TopicPartition($0, -1), 0) })
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let err = rd_kafka_subscribe(handle.pointer, list)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "subscribe to \(topics)") }
        case .partitions(let starts):
            let sorted = starts.sorted { $0.key < $1.key }
            let list = TopicPartition.makeList(sorted.map { ($0.key, $0.value.rawValue) })
            defer { rd_kafka_topic_partition_list_destroy(list) }
            let err = rd_kafka_assign(handle.pointer, list)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "assign \(sorted.map(\.key))") }
        }
    }

    deinit {
        if !isClosed.value { closeNow() }
        thread.stop()
    }

    // MARK: Blocking API, for a thread dedicated to this consumer

    /// Returns the messages available now, up to `maxMessages`; waits up to `timeout` only when none are.
    ///
    /// Rebalance hooks run inside this call. A batch may be empty (nothing arrived in time) and still
    /// report partitions that reached their end.
    /// - Throws: ``KafkaError`` for a fatal consumer error; other errors come in ``ConsumerBatch/errors``.
    @available(*, noasync, message: "blocks the calling thread; use nextBatch from async code")
    public func poll(
        maxMessages: Int = 10_000,
        timeout: Duration = .milliseconds(100)
    ) throws(KafkaError) -> ConsumerBatch {
        precondition(maxMessages > 0, "maxMessages must be positive")
        guard !isClosed.value, let queue = handle.consumerQueue else {
            throw KafkaError(code: .invalidState, message: "the consumer is closed")
        }
        let messages = UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>.allocate(capacity: maxMessages)
        // librdkafka's batch call waits for a full batch or the timeout, whichever comes first. Waiting for a
        // full batch would add the whole timeout to every message's latency at low rates, so take what is
        // there, and wait only for the first message when there is nothing.
        var count = rd_kafka_consume_batch_queue(queue, 0, messages, maxMessages)
        if count == 0 {
            count = rd_kafka_consume_batch_queue(queue, Int32(timeout.wholeMilliseconds), messages, 1)
            if count == 1 && maxMessages > 1 {
                count += max(0, rd_kafka_consume_batch_queue(queue, 0, messages + 1, maxMessages - 1))
            }
        }
        guard count >= 0 else {
            messages.deallocate()
            throw KafkaError(rd_kafka_last_error(), "consume")
        }
        return try sortOut(messages, count: count)
    }

    /// Records `offsets` (the next offset to read, per partition) as this consumer's progress, to be sent
    /// by the next ``commit(_:)`` without arguments.
    ///
    /// - Throws: ``KafkaError`` naming the partitions whose offsets were refused (for example partitions
    ///   no longer assigned to this consumer).
    public func storeOffsets(_ offsets: [TopicPartition: Int64]) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let list = TopicPartition.makeList(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let err = rd_kafka_offsets_store(handle.pointer, list)
        try Self.check(err, list: list, operation: "store offsets")
    }

    /// Commits offsets to the consumer group and waits for the broker's answer: `offsets` when given
    /// (the next offset to read, per partition), else the offsets stored with ``storeOffsets(_:)``.
    ///
    /// Waits at most the session timeout (see ``Consumer+Commit.swift``): librdkafka's own wait has no bound, and a
    /// commit sent to a coordinator that went down before answering is never answered.
    /// `giveUp` (asked every 0.1 s) ends the wait sooner: a stop past its deadline does not wait for the answer.
    ///
    /// - Throws: ``KafkaError`` when the commit failed, for the whole request or for some partitions, or `timedOut`
    ///   when no answer came, or none before `giveUp` said so.
    @available(*, noasync, message: "blocks the calling thread; use the async commit")
    public func commit(
        _ offsets: [TopicPartition: Int64]? = nil,
        giveUpWhen giveUp: () -> Bool = { false }
    ) throws(KafkaError) {
        guard let offsets else {
            try commitWaitingForAnswer(nil, operation: "commit stored offsets", giveUpWhen: giveUp)
            return
        }
        guard !offsets.isEmpty else { return }
        let list = TopicPartition.makeList(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        try commitWaitingForAnswer(list, operation: "commit offsets", giveUpWhen: giveUp)
    }

    /// Sends a commit of `offsets` (the next offset to read, per partition) to the consumer group and returns without
    /// waiting for the broker's answer.
    ///
    /// A refused commit is logged at debug level when a later poll serves the answer: for a caller whose own store is
    /// the source of truth and who commits again soon, a commit is a lag signal that need not hold up its loop.
    ///
    /// Call it from the consumer's thread, like the blocking API: it only queues a request, but it belongs to
    /// the same sequence of commits.
    /// - Throws: ``KafkaError`` when librdkafka refuses to queue the request (for example a closed consumer).
    public func commitInBackground(_ offsets: [TopicPartition: Int64]) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let list = TopicPartition.makeList(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let err = rd_kafka_commit(handle.pointer, list, 1)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "commit offsets") }
    }

    /// The group's committed offsets (the next offset to read) for `partitions`; partitions with no
    /// committed offset are absent.
    @available(*, noasync, message: "blocks the calling thread; use the async committedOffsets")
    public func committedOffsets(
        for partitions: [TopicPartition],
        timeout: Duration = .seconds(10)
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        try queryOffsets(partitions, asking: -1001, operation: "fetch committed offsets", timeout: timeout) {
            rd_kafka_committed(handle.pointer, $0, $1)
        }
    }

    /// The offset `position` stands for in each of `partitions` (``StartOffset/beginning``: the oldest offset the
    /// broker still has; ``StartOffset/end``: the next one to be written), asked in one request per leader.
    ///
    /// Starting a partition at the number rather than at the logical offset spares librdkafka its own query, which
    /// waits half a second whenever the partition's leader is not known yet.
    @available(*, noasync, message: "blocks the calling thread")
    public func offsets(
        _ position: StartOffset,
        of partitions: [TopicPartition],
        timeout: Duration = .seconds(10)
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        guard !partitions.isEmpty else { return [:] }
        // ListOffsets takes -2 and -1 as "earliest" and "latest" where it otherwise takes a timestamp.
        return try queryOffsets(partitions, asking: position.rawValue, operation: "look up offsets", timeout: timeout) {
            rd_kafka_offsets_for_times(handle.pointer, $0, $1)
        }
    }

    /// Asks librdkafka for an offset per partition through `query` (a blocking call that fills in the list it
    /// is given, each entry starting at `asking`); returns the partitions that got one (0 or more).
    private func queryOffsets(
        _ partitions: [TopicPartition],
        asking: Int64,
        operation: String,
        timeout: Duration,
        _ query: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>, Int32) -> rd_kafka_resp_err_t
    ) throws(KafkaError) -> [TopicPartition: Int64] {
        let list = TopicPartition.makeList(partitions.map { ($0, asking) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        try Self.check(query(list, Int32(timeout.wholeMilliseconds)), list: list, operation: operation)
        var result: [TopicPartition: Int64] = [:]
        for (partition, offset, _) in TopicPartition.offsets(from: list) where offset >= 0 {
            result[partition] = offset
        }
        return result
    }

    /// The number of partitions of `topic`, from the cluster's metadata.
    ///
    /// - Throws: ``KafkaError`` `unknownTopicOrPartition` when there is no such topic.
    @available(*, noasync, message: "blocks the calling thread; use the async partitionCount")
    public func partitionCount(topic: String, timeout: Duration = .seconds(10)) throws(KafkaError) -> Int {
        try handle.partitionCount(topic: topic, timeout: timeout)
    }

    // MARK: Non-blocking

    /// Stops fetching from `partitions` until ``resume(_:)``; their position is kept.
    public func pause(_ partitions: [TopicPartition]) throws(KafkaError) {
        let list = TopicPartition.makeList(partitions.map { ($0, 0) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        try Self.check(rd_kafka_pause_partitions(handle.pointer, list), list: list, operation: "pause")
    }

    /// Moves the read position of assigned `partitions` to these offsets (the next offset to read): the next
    /// messages they give start there, and whatever was fetched beyond is dropped.
    ///
    /// - Throws: ``KafkaError`` naming the partitions whose position could not be moved.
    @available(*, noasync, message: "blocks the calling thread; seek from the consumer's thread")
    public func seek(_ offsets: [TopicPartition: Int64], timeout: Duration = .seconds(10)) throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        let list = TopicPartition.makeList(offsets.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        if let error = rd_kafka_seek_partitions(handle.pointer, list, Int32(timeout.wholeMilliseconds)) {
            throw KafkaError(consuming: error)
        }
        try Self.check(RD_KAFKA_RESP_ERR_NO_ERROR, list: list, operation: "seek")
        // Moved back, a partition has messages to give again before it is at its end.
        state.forgetEnds(of: offsets.keys)
    }

    /// Fetches again from paused `partitions`, where they stopped.
    public func resume(_ partitions: [TopicPartition]) throws(KafkaError) {
        let list = TopicPartition.makeList(partitions.map { ($0, 0) })
        defer { rd_kafka_topic_partition_list_destroy(list) }
        try Self.check(rd_kafka_resume_partitions(handle.pointer, list), list: list, operation: "resume")
    }

    /// Raises a fatal error on the consumer, as librdkafka does when another member with the same `group.instance.id`
    /// fences it: for tests of what follows (librdkafka's `rd_kafka_test_fatal_error`).
    package func raiseFatalErrorForTesting(_ reason: String) {
        _ = rd_kafka_test_fatal_error(handle.pointer, RD_KAFKA_RESP_ERR__FENCED, reason)
    }

    /// The partitions this consumer holds now, as librdkafka sees it.
    public var assignment: Set<TopicPartition> {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle.pointer, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return [] }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        return Set(TopicPartition.array(from: list))
    }

    /// The offsets the group coordinator has acknowledged from this consumer's commits, per partition, since the
    /// partition was last assigned: what the group is known to hold.
    ///
    /// A commit refused (during a rebalance, say) leaves a partition's entry as it was, so the caller can tell what
    /// still needs committing.
    public var acknowledgedCommits: [TopicPartition: Int64] { state.acknowledgedCommits }

    /// Ends a ``poll(maxMessages:timeout:)`` that waits for messages now (or the next one, if none waits), as if its
    /// timeout had passed: another thread has something for the polling thread to act on.
    public func wakePoll() {
        guard !isClosed.value, let queue = handle.consumerQueue else { return }
        rd_kafka_queue_yield(queue)
    }

    /// The assigned partitions that have been read to their end, with nothing read from them since.
    public var partitionsAtEnd: Set<TopicPartition> { state.partitionsAtEnd }

    /// The partitions read to their end, each with the offset its end-of-partition event reported (the next offset
    /// to read then): a high watermark beyond it means a later fetch found more.
    public var endOffsets: [TopicPartition: Int64] { state.endOffsets }

    /// True when the consumer holds partitions and every one of them has been read to its end: what a replay or
    /// benchmark waits for.
    ///
    /// Needs ``ConsumerConfiguration/reportsEndOfPartition``.
    public var hasReachedEndOfAssignment: Bool {
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        guard rd_kafka_assignment(handle.pointer, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list else { return false }
        defer { rd_kafka_topic_partition_list_destroy(list) }
        let atEnd = state.partitionsAtEnd
        // A replay asks after every poll: while fewer partitions are at their end than are held, the answer
        // needs no names (making them allocates a string per partition).
        guard list.pointee.cnt > 0, atEnd.count >= Int(list.pointee.cnt) else { return false }
        return Set(TopicPartition.array(from: list)).isSubset(of: atEnd)
    }

    /// Asks the partition's leader for its low watermark (the oldest offset still kept) and high watermark
    /// (the offset the next message will get): `high - low` messages are there to read.
    ///
    /// - Throws: ``KafkaError`` when the broker does not answer within `timeout` or the partition is unknown.
    @available(*, noasync, message: "blocks the calling thread; use the async variant")
    public func watermarks(
        of partition: TopicPartition,
        timeout: Duration = .seconds(10)
    ) throws(KafkaError) -> (low: Int64, high: Int64) {
        try handle.watermarks(of: partition, timeout: timeout)
    }

    /// The high watermark (the offset the next message produced will get) of each partition, as last seen in a fetch
    /// response; partitions not fetched yet are left out.
    ///
    /// Answers from librdkafka's cache without a broker round trip, so it is cheap enough for a lag metric.
    public func cachedHighWatermarks(for partitions: some Sequence<TopicPartition>) -> [TopicPartition: Int64] {
        var watermarks: [TopicPartition: Int64] = [:]
        for partition in partitions {
            if let high = cachedHighWatermark(of: partition) { watermarks[partition] = high }
        }
        return watermarks
    }

    /// The high watermark of one partition as the last fetch response gave it; nil when not fetched yet.
    public func cachedHighWatermark(of partition: TopicPartition) -> Int64? {
        var low: Int64 = 0
        var high: Int64 = 0
        let err = rd_kafka_get_watermark_offsets(handle.pointer, partition.topic, partition.partition, &low, &high)
        return err == RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0 ? high : nil
    }

    // MARK: Internals

    /// Keeps the data messages (compacted to the front), turns partition ends and errors into batch
    /// information, and releases those messages.
    private func sortOut(
        _ messages: UnsafeMutablePointer<UnsafeMutablePointer<rd_kafka_message_t>?>,
        count: Int
    ) throws(KafkaError) -> ConsumerBatch {
        var kept = 0
        var reachedEnd: [TopicPartition] = []
        var errors: [KafkaError] = []
        state.withEndTracking { tracker in
            for index in 0..<count {
                let message = messages[index]!
                let err = message.pointee.err
                if err == RD_KAFKA_RESP_ERR_NO_ERROR {
                    tracker.didRead(message)
                    messages[kept] = message
                    kept += 1
                    continue
                }
                if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
                    reachedEnd.append(tracker.didReachEnd(message))
                } else {
                    let text = String(cString: rd_kafka_message_errstr(message))
                    errors.append(KafkaError.resolvingFatal(err, handle: handle.pointer, context: text))
                }
                rd_kafka_message_destroy(message)
            }
        }
        let batch = ConsumerBatch(
            handle: handle,
            messages: messages,
            count: kept,
            partitionsReachedEnd: reachedEnd,
            errors: errors
        )
        for error in errors {
            if error.isFatal { throw error }
            logger.warning("Consumer error", metadata: [KafkaLogKey.kafkaError: "\(error)"])
        }
        return batch
    }

    static func check(
        _ err: rd_kafka_resp_err_t,
        list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>,
        operation: String
    ) throws(KafkaError) {
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, operation) }
        let failed = TopicPartition.offsets(from: list).filter { $0.2 != RD_KAFKA_RESP_ERR_NO_ERROR }
        guard let first = failed.first else { return }
        let names = failed.map { "\($0.0): \(String(cString: rd_kafka_err2name($0.2)))" }.joined(separator: ", ")
        throw KafkaError(
            code: KafkaError.Code(rawValue: first.2.rawValue),
            message: "\(operation) failed for \(names)"
        )
    }
}

/// librdkafka's answer to an offset commit, run inside a poll on the polling thread: what was accepted goes
/// into ``Consumer/acknowledgedCommits``; a refused commit of ``Consumer/commitInBackground(_:)`` reaches
/// nobody else, so it is logged here (synchronous commits throw).
private func offsetCommitCallback(
    handle: OpaquePointer?,
    err: rd_kafka_resp_err_t,
    offsets: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    opaque: UnsafeMutableRawPointer?
) {
    guard let context = ClientContext.of(handle) else { return }
    if err == RD_KAFKA_RESP_ERR_NO_ERROR, let offsets { context.committed?(offsets) }
    // Nothing to commit is not a failure.
    guard err != RD_KAFKA_RESP_ERR_NO_ERROR, err != RD_KAFKA_RESP_ERR__NO_OFFSET else { return }
    context.logger.debug("Group offset commit refused", metadata: [KafkaLogKey.kafkaError: "\(KafkaError(err))"])
}

/// librdkafka's rebalance callback, run inside a poll on the polling thread.
func rebalanceCallback(
    handle: OpaquePointer?,
    err: rd_kafka_resp_err_t,
    partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
    opaque: UnsafeMutableRawPointer?
) {
    guard let handle, let partitions, let rebalance = ClientContext.of(handle)?.rebalance else { return }
    rebalance(handle, err, partitions)
}
