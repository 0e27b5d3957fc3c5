public import PartitionOffsets
import Threads

/// The consumer's async API: the blocking calls, run on the consumer's own thread, never on Swift's cooperative
/// pool.
extension Consumer {
    /// Returns the messages available now, up to `maxMessages`; waits up to `timeout` only when none are.
    ///
    /// See ``poll(maxMessages:timeout:)``.
    public func nextBatch(
        maxMessages: Int = 10_000,
        timeout: Duration = .milliseconds(100)
    ) async throws(KafkaError) -> ConsumerBatch {
        try await thread.run { [self] () throws(KafkaError) in try poll(maxMessages: maxMessages, timeout: timeout) }
    }

    /// Commits offsets to the consumer group and waits for the broker's answer.
    ///
    /// See ``commit(_:)``.
    public func commit(_ offsets: [TopicPartition: Int64]? = nil) async throws(KafkaError) {
        try await thread.run { [self] () throws(KafkaError) in try commit(offsets) }
    }

    /// The group's committed offsets for `partitions`.
    ///
    /// See ``committedOffsets(for:timeout:)``.
    public func committedOffsets(
        for partitions: [TopicPartition],
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError) -> [TopicPartition: Int64] {
        try await thread.run { [self] () throws(KafkaError) in try committedOffsets(for: partitions, timeout: timeout) }
    }

    /// Where `position` stands in each of `partitions`.
    ///
    /// See ``offsets(_:of:timeout:)``.
    public func offsets(
        _ position: StartOffset,
        of partitions: [TopicPartition],
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError) -> [TopicPartition: Int64] {
        try await thread.run { [self] () throws(KafkaError) in try offsets(position, of: partitions, timeout: timeout) }
    }

    /// The partition's low and high watermarks.
    ///
    /// See ``watermarks(of:timeout:)``.
    public func watermarks(
        of partition: TopicPartition,
        timeout: Duration = .seconds(10)
    ) async throws(KafkaError) -> (low: Int64, high: Int64) {
        try await thread.run { [handle] () throws(KafkaError) in try handle.watermarks(of: partition, timeout: timeout)
        }
    }

    /// The number of partitions of `topic`.
    ///
    /// See ``partitionCount(topic:timeout:)``.
    public func partitionCount(topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> Int {
        try await thread.run { [handle] () throws(KafkaError) in
            try handle.partitionCount(topic: topic, timeout: timeout)
        }
    }

    /// Leaves the group and stops the consumer.
    ///
    /// See ``close()``.
    public func close() async {
        _ = try? await thread.run { [self] () throws(KafkaError) in closeNow() }
    }
}
