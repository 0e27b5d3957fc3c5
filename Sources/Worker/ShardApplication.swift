import Foundation
import Kafka

/// The apply threads: one per shard, applying what the loop merged while the loop polls and merges the
/// next batch.
///
/// The loop queues messages on the shards, then ``start(_:releasedOffsets:polledAt:producer:feed:)`` hands each busy
/// shard's queue to its thread and returns at once; ``finish()`` waits until every shard has applied and sent
/// what it was handed. Between the two the loop touches only the shards' queues; checkpoints, queries,
/// revocations and assignments come after a ``finish()``, so they never see a shard in the middle of a batch.
/// The messages a shard applied stay queued until the next start, which lets them go on the loop while the
/// threads apply the next ones (``DeviceShard/releaseApplied()``).
///
/// The input offsets a checkpoint may store are those of applied messages only: the merge's offsets travel
/// with the messages they belong to and count as applied once ``finish()`` returns (``takeAppliedOffsets()``).
final class ShardApplication: @unchecked Sendable {
    // @unchecked: `running` and `appliedAt` are guarded by `condition`; the offsets and `polledAt` are the loop
    // thread's.
    private let threads: [DedicatedThread]
    private let condition = NSCondition()
    private var running = 0
    /// The merge's next offsets of the messages being applied.
    private var offsetsInFlight: [TopicPartition: Int64] = [:]
    /// The next offsets of messages applied since the last checkpoint took them.
    private var appliedOffsets: [TopicPartition: Int64] = [:]
    /// When the batch being applied was polled, and when its last shard was done (the batch-duration metric).
    private var polledAt: ContinuousClock.Instant?
    private var appliedAt: ContinuousClock.Instant?

    init(threadCount: Int) {
        threads = (0..<threadCount).map { DedicatedThread(name: "geoworker-apply-\($0)") }
    }

    deinit {
        for thread in threads { thread.stop() }
    }

    /// Hands every shard's queued messages to its thread, without waiting.
    ///
    /// - Parameters:
    ///   - releasedOffsets: the merge's next offsets of the messages queued since the last start.
    ///   - polledAt: when the poll that brought them returned.
    func start(
        _ shards: DeviceShards,
        releasedOffsets: [TopicPartition: Int64],
        polledAt: ContinuousClock.Instant,
        producer: Producer,
        feed: EventFeed
    ) {
        precondition(running == 0, "a batch is still being applied")
        precondition(shards.count <= threads.count, "more shards than apply threads")
        offsetsInFlight = releasedOffsets
        let busy = shards.shards.indices.filter { shards.shards[$0].hasPending }
        for shard in shards.shards { shard.takePending() }
        // Released once the threads have started, so that the loop does it while they apply.
        defer { for shard in shards.shards { shard.releaseApplied() } }
        guard !busy.isEmpty else {
            finishOffsets()
            return
        }
        self.polledAt = polledAt
        condition.lock()
        running = busy.count
        appliedAt = nil
        condition.unlock()
        for index in busy {
            let shard = shards.shards[index]
            threads[index].execute { [self] in
                shard.applyTaken(producer: producer, feed: feed)
                shardDone()
            }
        }
    }

    /// Has every shard encode its changed devices for the next checkpoint on its own thread
    /// (``DeviceShard/encodeChanges()``), all at once, and waits until they have. Call after ``finish()``.
    func encodeChanges(of shards: DeviceShards) {
        precondition(running == 0, "a batch is still being applied")
        precondition(shards.count <= threads.count, "more shards than apply threads")
        condition.lock()
        running = shards.count
        condition.unlock()
        for (index, shard) in shards.shards.enumerated() {
            threads[index].execute { [self] in
                shard.encodeChanges()
                shardDone()
            }
        }
        condition.lock()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    /// On an apply thread: its shard is done with what it was handed.
    private func shardDone() {
        condition.lock()
        running -= 1
        if running == 0 {
            appliedAt = .now
            condition.broadcast()
        }
        condition.unlock()
    }

    /// Waits until every shard has applied and sent what it was handed; returns, if a batch was being applied,
    /// how long it took from its poll until its last shard was done (not until this call: the loop polls and
    /// merges meanwhile, and at a quiet time its poll waits for messages).
    @discardableResult
    func finish() -> Duration? {
        condition.lock()
        while running > 0 { condition.wait() }
        let appliedAt = appliedAt
        condition.unlock()
        finishOffsets()
        defer { polledAt = nil }
        guard let polledAt, let appliedAt else { return nil }
        return appliedAt - polledAt
    }

    /// The next offsets of the messages applied since the last call (what a checkpoint stores), and forgets
    /// them. Call after ``finish()``.
    func takeAppliedOffsets() -> [TopicPartition: Int64] {
        defer { appliedOffsets = [:] }
        return appliedOffsets
    }

    /// Forgets what was applied since the last checkpoint (a rewind throws that state away). Call after
    /// ``finish()``.
    func discardApplied() {
        appliedOffsets = [:]
    }

    private func finishOffsets() {
        // Later offsets of a partition supersede earlier ones.
        appliedOffsets.merge(offsetsInFlight) { _, later in later }
        offsetsInFlight = [:]
    }
}
