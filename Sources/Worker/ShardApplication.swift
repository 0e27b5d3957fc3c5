import Foundation
import Kafka

/// The apply threads: one per shard, applying what the loop merged while the loop polls and merges on.
///
/// Each ``start(_:releasedOffsets:polledAt:producer:feed:)`` hands what the shards queued since the last one
/// to their threads as one round and returns at once; a shard's thread applies its rounds in order, going on
/// to its next round as soon as it is done with one, without waiting for the other shards or for the loop.
/// The loop runs at most ``roundsInFlight`` rounds ahead: it waits before handing over another, so that what
/// is queued stays bounded. ``finish()`` waits until every shard has applied and sent all it was handed;
/// checkpoints, queries, revocations and assignments come after a ``finish()``, so they never see a shard in
/// the middle of a round.
///
/// Four rounds in flight rather than one: with one, each round ended at a barrier, the shard done first idling
/// until the other was, and both idling until the loop (preempted by them on two cores) had merged the next
/// batch; with two, a shard that got ahead (the other preempted for a few milliseconds) could still wait for
/// the oldest round (the cores idled 3 % of a catch-up's window with two, 2.2 % with four). What is in flight
/// stays bounded: four polls' messages, already in librdkafka's memory; a checkpoint or a question waits for
/// them (a few tens of milliseconds in a catch-up).
///
/// The input offsets a checkpoint may store are those of applied messages only: a round's offsets count as
/// applied once every shard applied its part of that round and of every round before it
/// (``takeAppliedOffsets()``).
///
/// The messages of a round stay referenced until the loop lets them go (at its next start, or at
/// ``finish()``): each record holds a reference to its poll's batch, which both apply threads' records
/// share, and released on the apply threads every message was an atomic decrement on a cache line the two
/// threads passed back and forth.
final class ShardApplication: @unchecked Sendable {
    // @unchecked: everything below but `threads` and `appliedOffsets` is guarded by `condition`;
    // `appliedOffsets` is the loop thread's.

    /// How many rounds the loop may have handed over and not yet seen applied.
    static let roundsInFlight = 4

    /// One ``start(_:releasedOffsets:polledAt:producer:feed:)``'s messages, while some shard still applies them.
    private struct Round {
        let number: Int
        /// The merge's next offsets of the messages in the round.
        let offsets: [TopicPartition: Int64]
        let polledAt: ContinuousClock.Instant
        /// How many shards have yet to apply their part.
        var shardsLeft: Int
        /// When its last shard was done.
        var appliedAt: ContinuousClock.Instant?
    }

    private let threads: [DedicatedThread]
    private let condition = NSCondition()
    /// Handed over and not yet counted as applied, in order.
    private var rounds: [Round] = []
    private var nextRound = 0
    /// Each shard's parts of rounds, handed over and not yet taken by its thread, in order.
    private var inboxes: [[(round: Int, messages: [DeviceShard.Message])]]
    /// Applied messages, for the loop to let go.
    private var applied: [[DeviceShard.Message]] = []
    /// How long each round applied since the last ``takeRoundDurations()`` took, from its poll until its last
    /// shard was done.
    private var roundDurations: [Duration] = []
    /// The next offsets of messages applied since the last checkpoint took them.
    private var appliedOffsets: [TopicPartition: Int64] = [:]

    init(threadCount: Int) {
        threads = (0..<threadCount).map { DedicatedThread(name: "geoworker-apply-\($0)") }
        inboxes = Array(repeating: [], count: threadCount)
    }

    deinit {
        for thread in threads { thread.stop() }
    }

    /// Hands every shard's queued messages to its thread as one round, without waiting for them to be applied;
    /// first waits, if ``roundsInFlight`` rounds are still being applied, until the oldest is.
    ///
    /// - Parameters:
    ///   - releasedOffsets: the merge's next offsets of the messages queued since the last start.
    ///   - polledAt: when the poll that brought them returned.
    func start(
        _ shards: inout DeviceShards,
        releasedOffsets: [TopicPartition: Int64],
        polledAt: ContinuousClock.Instant,
        producer: Producer,
        feed: EventFeed
    ) {
        precondition(shards.count <= threads.count, "more shards than apply threads")
        let parts = shards.takePending()
        let busy = parts.indices.filter { !parts[$0].isEmpty }
        condition.lock()
        collectAppliedRounds()
        while rounds.count >= Self.roundsInFlight {
            condition.wait()
            collectAppliedRounds()
        }
        let number = nextRound
        nextRound += 1
        rounds.append(Round(number: number, offsets: releasedOffsets, polledAt: polledAt, shardsLeft: busy.count))
        for index in busy { inboxes[index].append((number, parts[index])) }
        // A round with no messages (its offsets still count, in order) is applied at once.
        collectAppliedRounds()
        var release: [[DeviceShard.Message]] = []
        swap(&release, &applied)
        condition.unlock()
        for index in busy {
            let shard = shards.shards[index]
            threads[index].execute { [self] in applyNextPart(of: shard, index: index, producer: producer, feed: feed) }
        }
        // Let go here, on the loop and outside the lock, while the threads apply.
        release.removeAll()
    }

    /// Waits until every shard has applied and sent everything it was handed, and lets the applied messages go.
    func finish() {
        condition.lock()
        while rounds.contains(where: { $0.shardsLeft > 0 }) { condition.wait() }
        collectAppliedRounds()
        var release: [[DeviceShard.Message]] = []
        swap(&release, &applied)
        condition.unlock()
        release.removeAll()
    }

    /// Whether every shard has applied everything it was handed: ``finish()`` would not wait.
    var hasFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !rounds.contains { $0.shardsLeft > 0 }
    }

    /// How long each round applied since the last call took, from its poll until its last shard was done (not
    /// until the loop noticed: it polls and merges meanwhile, and at a quiet time its poll waits for messages).
    func takeRoundDurations() -> [Duration] {
        condition.lock()
        defer { condition.unlock() }
        collectAppliedRounds()
        defer { roundDurations = [] }
        return roundDurations
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

    /// Has every shard encode its changed devices for the next checkpoint on its own thread
    /// (``DeviceShard/encodeChanges()``), all at once, and waits until they have. Call after ``finish()``.
    func encodeChanges(of shards: DeviceShards) {
        precondition(shards.count <= threads.count, "more shards than apply threads")
        let group = DispatchGroup()
        for (index, shard) in shards.shards.enumerated() {
            group.enter()
            threads[index].execute {
                shard.encodeChanges()
                group.leave()
            }
        }
        group.wait()
    }

    /// On a shard's thread: applies the oldest part handed to it, then counts it applied.
    private func applyNextPart(of shard: DeviceShard, index: Int, producer: Producer, feed: EventFeed) {
        condition.lock()
        let (number, messages) = inboxes[index].removeFirst()
        condition.unlock()
        shard.apply(messages, producer: producer, feed: feed)
        condition.lock()
        // Moved, not copied: the loop, not this thread, lets the messages go.
        applied.append(consume messages)
        let position = rounds.firstIndex { $0.number == number }!
        rounds[position].shardsLeft -= 1
        if rounds[position].shardsLeft == 0 {
            rounds[position].appliedAt = .now
            condition.broadcast()
        }
        condition.unlock()
    }

    /// With `condition` held: counts the applied rounds at the front as applied, in order (a later round may
    /// be done before an earlier one whose other shard is slower).
    private func collectAppliedRounds() {
        while let first = rounds.first, first.shardsLeft == 0 {
            rounds.removeFirst()
            // Later offsets of a partition supersede earlier ones.
            appliedOffsets.merge(first.offsets) { _, later in later }
            if let appliedAt = first.appliedAt { roundDurations.append(appliedAt - first.polledAt) }
        }
    }
}
