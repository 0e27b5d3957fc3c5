import CRdKafka
import Foundation
public import Logging
import Synchronization
import Threads

/// Produces messages to Kafka through librdkafka, with delivery reports per message and per batch.
///
/// The producer is idempotent by default (`enable.idempotence=true`, `acks=all`). Sending only queues
/// messages and never blocks unless librdkafka's local queue is full; a dedicated thread serves the
/// delivery reports. Call ``close(timeout:)`` to deliver what is queued before the producer goes away.
public final class Producer: Sendable {
    let handle: KafkaHandle
    private let logger: Logger
    private let pollThread: DedicatedThread
    private let isPolling = AtomicFlag(true)
    private let isClosed = AtomicFlag(false)
    /// librdkafka topic handles, made once per topic name and kept until the producer goes.
    private let topicHandles = Mutex<[String: TopicHandle]>([:])
    /// The client's connection losses when the current transaction began (``lostConnectionDuringTransaction``).
    let connectionLossesAtBegin = Atomic<Int>(0)

    /// Creates a producer and starts serving its delivery reports.
    ///
    /// - Throws: ``KafkaError`` when a property is refused or librdkafka cannot start the client.
    public init(
        configuration: ProducerConfiguration,
        logger: Logger = Logger(label: "geoworker.kafka.producer")
    ) throws(KafkaError) {
        self.logger = logger
        self.handle = try KafkaHandle(
            kind: RD_KAFKA_PRODUCER,
            properties: configuration.librdkafkaProperties,
            context: ClientContext(logger: logger, tracksTransactions: configuration.transactionalId != nil),
            configure: { rd_kafka_conf_set_dr_msg_cb($0, deliveryReportCallback) }
        )
        self.pollThread = DedicatedThread(name: "kafka-producer-poll")
        pollThread.execute { [handle, isPolling] in
            while isPolling.value { rd_kafka_poll(handle.pointer, 100) }
        }
    }

    deinit {
        if !isClosed.value { shutDown(timeout: .zero) }
        // Only here, with no sender left, is it safe to drop the topic handles sends may be using.
        topicHandles.withLock { handles in
            for topic in handles.values { rd_kafka_topic_destroy(topic.pointer) }
        }
    }

    /// Queues `records` and returns their delivery reports to come.
    ///
    /// When librdkafka's local queue is full (`queue.buffering.max.messages`), waits for room rather than
    /// failing. A message librdkafka refuses at once (too large, producer closed or failed) gets its
    /// failed report straight away; nothing is thrown and nothing is dropped silently.
    @available(*, noasync, message: "may block while the local queue is full; use the async send")
    public func send(_ records: [ProducerRecord]) -> DeliveryBatch {
        let batch = DeliveryBatch(topics: records.map(\.topic))
        var next = 0
        while next < records.count {
            next = enqueue(records, from: next, into: batch)
            if next < records.count { usleep(1000) }
        }
        return batch
    }

    /// Queues the buffer's records and returns their delivery reports to come, in the buffer's order.
    ///
    /// Each key and value is handed to librdkafka (which copies it) from where it lies in the buffer, and the
    /// headers are made once for the whole buffer. Waits for room when the local queue is full, and reports a
    /// record librdkafka refuses at once, as ``send(_:)-([ProducerRecord])`` does.
    @available(*, noasync, message: "may block while the local queue is full")
    public func send(_ buffer: RecordBuffer) -> DeliveryBatch {
        let batch = DeliveryBatch(topic: buffer.topic, count: buffer.count)
        guard !buffer.isEmpty else { return batch }
        guard let topic = isClosed.value ? nil : topicHandle(buffer.topic) else {
            let refusal = isClosed.value ? Self.closedRefusal : Self.invalidTopic(buffer.topic)
            for index in 0..<buffer.count { batch.complete(index: index, partition: -1, offset: nil, error: refusal) }
            return batch
        }
        // librdkafka takes over the headers of each message it queues: each gets a copy of these.
        let headers: OpaquePointer? = buffer.headers.isEmpty ? nil : makeHeaders(buffer.headers)
        defer { if let headers { rd_kafka_headers_destroy(headers) } }
        var next = 0
        while next < buffer.count {
            next = buffer.forEachRecord(from: next) { index, key, value in
                let refusal = produce(
                    topic: topic,
                    partition: nil,
                    key: key,
                    value: value,
                    headers: headers.map { rd_kafka_headers_copy($0)! },
                    timestampMilliseconds: nil,
                    opaque: batch.slots + index
                )
                guard let refusal else { return true }
                if refusal.code == .queueFull { return false }
                batch.complete(index: index, partition: -1, offset: nil, error: refusal)
                return true
            }
            if next < buffer.count { usleep(1000) }
        }
        return batch
    }

    /// Queues `records` and returns their delivery reports to come; suspends while the local queue is full.
    public func send(_ records: [ProducerRecord]) async -> DeliveryBatch {
        let batch = DeliveryBatch(topics: records.map(\.topic))
        var next = 0
        while next < records.count {
            next = enqueue(records, from: next, into: batch)
            if next < records.count { try? await Task.sleep(for: .milliseconds(1)) }
        }
        return batch
    }

    /// Sends one record and waits for its delivery report.
    public func send(_ record: ProducerRecord) async -> DeliveryReport {
        await send([record]).reports()[0]
    }

    /// Delivers what is queued (up to `timeout`, or until `giveUp`, asked every 0.1 s, says so), then stops the
    /// producer.
    ///
    /// Messages still undelivered at the deadline are purged and their reports say so. Sends after closing fail with
    /// `invalidState`.
    @available(*, noasync, message: "blocks the calling thread; use the async close")
    public func close(timeout: Duration = .seconds(10), giveUpWhen giveUp: () -> Bool = { false }) {
        shutDown(timeout: timeout, giveUp: giveUp)
    }

    /// Delivers what is queued (up to `timeout`), then stops the producer, off the cooperative pool.
    public func close(timeout: Duration = .seconds(10)) async {
        try? await DedicatedThread.runOnce(name: "kafka-producer-close") { [self] () throws(KafkaError) in
            shutDown(timeout: timeout)
        }
    }

    /// The number of partitions of `topic`, from the cluster's metadata.
    ///
    /// - Throws: ``KafkaError`` `unknownTopicOrPartition` when there is no such topic.
    @available(*, noasync, message: "blocks the calling thread; use the async partitionCount")
    public func partitionCount(topic: String, timeout: Duration = .seconds(10)) throws(KafkaError) -> Int {
        try handle.partitionCount(topic: topic, timeout: timeout)
    }

    /// The number of partitions of `topic`.
    ///
    /// - Throws: ``KafkaError`` `unknownTopicOrPartition` when there is no such topic.
    public func partitionCount(topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> Int {
        try await DedicatedThread.runOnce(name: "kafka-metadata") { [handle] () throws(KafkaError) in
            try handle.partitionCount(topic: topic, timeout: timeout)
        }
    }

    /// Asks the cluster to create `topic` with these settings and waits for its answer; a topic that exists already is
    /// not an error.
    ///
    /// Blocks the calling thread up to `timeout` and a second.
    ///
    /// - Parameters:
    ///   - topic: the topic's name.
    ///   - partitions: how many partitions it gets.
    ///   - replicationFactor: -1 takes the broker's `default.replication.factor`.
    ///   - configuration: topic-level settings (`cleanup.policy`, for example).
    ///   - timeout: how long the cluster may take to answer.
    /// - Throws: ``KafkaError`` with the cluster's reason, `unsupportedFeature` from a broker that has no
    ///   CreateTopics, or `timedOut`.
    @available(*, noasync, message: "blocks the calling thread")
    public func createTopic(
        _ topic: String,
        partitions: Int,
        replicationFactor: Int = -1,
        configuration: [String: String] = [:],
        timeout: Duration = .seconds(10)
    ) throws(KafkaError) {
        try handle.createTopic(
            topic,
            partitions: partitions,
            replicationFactor: replicationFactor,
            configuration: configuration,
            timeout: timeout
        )
    }

    /// ``createTopic(_:partitions:replicationFactor:configuration:timeout:)`` off the cooperative pool.
    public func createTopic(
        _ topic: String,
        partitions: Int,
        replicationFactor: Int = -1,
        configuration: [String: String] = [:],
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError) {
        try await DedicatedThread.runOnce(name: "kafka-create-topic") { [handle] () throws(KafkaError) in
            try handle.createTopic(
                topic,
                partitions: partitions,
                replicationFactor: replicationFactor,
                configuration: configuration,
                timeout: timeout
            )
        }
    }

    /// The settings of `topic` as the cluster reports them (DescribeConfigs), by name; off the cooperative pool.
    ///
    /// - Throws: ``KafkaError`` with the cluster's reason, or `timedOut`.
    public func topicConfiguration(
        _ topic: String,
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError)
        -> [String: String]
    {
        try await DedicatedThread.runOnce(name: "kafka-describe-topic") { [handle] () throws(KafkaError) in
            try handle.topicConfiguration(topic, timeout: timeout)
        }
    }

    /// Queues records from `start` on until librdkafka's queue is full; returns the index of the first
    /// record not queued (`records.count` when all were).
    private func enqueue(_ records: [ProducerRecord], from start: Int, into batch: DeliveryBatch) -> Int {
        // Through a buffer pointer: each record is read in place rather than copied (and its references
        // retained) on the way to librdkafka, which copies what it keeps.
        records.withUnsafeBufferPointer { records in
            var cachedTopic: TopicHandle?
            for index in start..<records.count {
                let refusal: KafkaError?
                if isClosed.value {
                    refusal = Self.closedRefusal
                } else {
                    if cachedTopic?.name != records[index].topic { cachedTopic = topicHandle(records[index].topic) }
                    if let topic = cachedTopic {
                        refusal = produce(records.baseAddress! + index, topic: topic, opaque: batch.slots + index)
                        if refusal?.code == .queueFull { return index }
                    } else {
                        refusal = Self.invalidTopic(records[index].topic)
                    }
                }
                if let refusal {
                    batch.complete(index: index, partition: records[index].partition ?? -1, offset: nil, error: refusal)
                }
            }
            return records.count
        }
    }

    /// What a record sent after ``close(timeout:)`` is told.
    private static let closedRefusal = KafkaError(code: .invalidState, message: "the producer is closed")

    /// What a record for a topic librdkafka has no handle for is told.
    private static func invalidTopic(_ name: String) -> KafkaError {
        KafkaError(code: .invalidArgument, message: "invalid topic name '\(name)'")
    }

    /// Hands one record to librdkafka; nil when it was queued.
    private func produce(
        _ record: UnsafePointer<ProducerRecord>,
        topic: TopicHandle,
        opaque: UnsafeMutableRawPointer
    ) -> KafkaError? {
        // `record.pointee.…` reads each field in place: passing the record by value copied it whole.
        record.pointee.key.withOptionalBytes { key in
            record.pointee.value.withOptionalBytes { value in
                produce(
                    topic: topic,
                    partition: record.pointee.partition,
                    key: key,
                    value: value,
                    headers: record.pointee.headers.isEmpty ? nil : makeHeaders(record.pointee.headers),
                    timestampMilliseconds: record.pointee.timestampMilliseconds,
                    opaque: opaque
                )
            }
        }
    }

    /// Hands one message to librdkafka, which copies key and value and takes `headers` over once it has queued the
    /// message; nil when it was queued.
    ///
    /// Both send paths come through here.
    ///
    /// - Parameters:
    ///   - topic: the topic's handle.
    ///   - partition: nil lets the partitioner choose from the key.
    ///   - key: nil for none.
    ///   - value: nil for none (a tombstone).
    ///   - headers: librdkafka's header list, taken over once the message is queued.
    ///   - timestampMilliseconds: nil lets librdkafka stamp the send time.
    ///   - opaque: what the delivery report hands back.
    /// - Returns: nil when the message was queued, else why not.
    private func produce(
        topic: TopicHandle,
        partition: Int32?,
        key: UnsafeRawBufferPointer?,
        value: UnsafeRawBufferPointer?,
        headers: OpaquePointer?,
        timestampMilliseconds: Int64?,
        opaque: UnsafeMutableRawPointer
    ) -> KafkaError? {
        let error = geoworker_produce(
            handle.pointer,
            topic.pointer,
            partition ?? -1,  // RD_KAFKA_PARTITION_UA: let the partitioner choose
            key?.baseAddress,
            key?.count ?? 0,
            value?.baseAddress,
            value?.count ?? 0,
            headers,
            timestampMilliseconds ?? 0,
            opaque
        )
        guard let error else { return nil }
        // Not queued: the headers are still ours.
        if let headers { rd_kafka_headers_destroy(headers) }
        let kafkaError = KafkaError(consuming: error)
        return kafkaError.code == .fatal ? (KafkaError.fatalError(of: handle.pointer) ?? kafkaError) : kafkaError
    }

    private func topicHandle(_ name: String) -> TopicHandle? {
        topicHandles.withLock { handles in
            if let existing = handles[name] { return existing }
            guard let pointer = rd_kafka_topic_new(handle.pointer, name, nil) else { return nil }
            let topic = TopicHandle(name: name, pointer: pointer)
            handles[name] = topic
            return topic
        }
    }

    private func shutDown(timeout: Duration, giveUp: () -> Bool = { false }) {
        guard !isClosed.exchange(true) else { return }
        isPolling.set(false)
        // rd_kafka_flush serves delivery reports itself, so it does not need the polling loop.
        let deadline = ContinuousClock.now + timeout
        repeat {
            let remaining = max(.zero, deadline - ContinuousClock.now)
            rd_kafka_flush(handle.pointer, Int32(min(100, remaining.wholeMilliseconds)))
        } while rd_kafka_outq_len(handle.pointer) > 0 && ContinuousClock.now < deadline && !giveUp()
        let outstanding = rd_kafka_outq_len(handle.pointer)
        if outstanding > 0 {
            logger.warning("Producer closed with \(outstanding) messages undelivered; they are reported as purged")
            rd_kafka_purge(handle.pointer, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
            // Purged messages get their failed reports on the next serve.
            rd_kafka_flush(handle.pointer, 500)
        }
        pollThread.stop()
    }

    private func makeHeaders(_ headers: [KafkaHeader]) -> OpaquePointer {
        let list = rd_kafka_headers_new(headers.count)!
        for header in headers {
            header.value.withOptionalBytes { bytes in
                // The name's bytes where they lie, with their length: passing the String as a C string
                // converted it into a new array for every record.
                var name = header.name
                name.withUTF8 { name in
                    _ = rd_kafka_header_add(list, name.baseAddress, name.count, bytes?.baseAddress, bytes?.count ?? 0)
                }
            }
        }
        return list
    }
}

/// A librdkafka topic handle (`rd_kafka_topic_t *`), valid until the producer's deinit destroys it.
private struct TopicHandle: @unchecked Sendable {
    let name: String
    let pointer: OpaquePointer
}

extension Optional where Wrapped == [UInt8] {
    /// Calls `body` with the bytes, or with nil when there are none (a null key or value).
    func withOptionalBytes<R>(_ body: (UnsafeRawBufferPointer?) -> R) -> R {
        switch self {
        case .none: return body(nil)
        case .some(let bytes) where bytes.isEmpty:
            // An empty value is not a null one: librdkafka tells them apart by the pointer.
            return withUnsafeBytes(of: 0 as UInt8) { body(UnsafeRawBufferPointer(start: $0.baseAddress, count: 0)) }
        case .some(let bytes): return bytes.withUnsafeBytes { body($0) }
        }
    }
}
