import Foundation
import GeoCore
import Kafka
import Synchronization
import Threads

/// The apply threads: one per shard, applying what the loop merged while the loop polls and merges on.
///
/// Each ``start(_:polledAt:producer:feed:)`` hands what the shards queued since the last one to their threads
/// as one round and returns at once; a shard's thread processes its rounds in order, going on to its next
/// round as soon as it is done with one, without waiting for the other shards or for the loop. The loop runs
/// at most ``roundsInFlight`` rounds ahead: it waits before handing over another, so that what is queued stays
/// bounded. ``waitUntilApplied()`` waits until every shard has processed and sent all it was handed; checkpoints,
/// queries, revocations and assignments come after ``waitUntilApplied()``, so they never see a shard in the middle of
/// a round.
///
/// Four rounds in flight rather than one: with one, each round ended at a barrier, the shard done first idling
/// until the other was, and both idling until the loop (preempted by them on two cores) had merged the next
/// batch; with two, a shard that got ahead could still wait for the oldest round. What is in flight stays
/// bounded: four polls' messages, already in librdkafka's memory.
///
/// A round counts as applied once every shard processed its part of it and of every round before it
/// (``takeAppliedRounds()``): the ``OffsetLedger`` lets a checkpoint store its offsets only then.
///
/// The messages of a round stay referenced until the loop lets them go (at its next start, or at
/// ``waitUntilApplied()``): each record holds a reference to its poll's batch, which both apply threads' records
/// share, and released on the apply threads every message was an atomic decrement on a cache line the two
/// threads passed back and forth.
final class ApplyThreads: @unchecked Sendable {
    // @unchecked: everything below but `threads` is guarded by `condition`.

    /// How many rounds the loop may have handed over and not yet seen applied.
    static let roundsInFlight = 4

    /// A round every shard has processed, in order, and how long it took from its poll until its last shard
    /// was done (nil for a round with no messages).
    struct AppliedRound: Equatable {
        let number: Int
        let duration: Duration?
    }

    /// One ``start(_:polledAt:producer:feed:)``'s messages, while some shard still processes them.
    private struct Round {
        let number: Int
        let polledAt: ContinuousClock.Instant
        /// How many shards have yet to process their part.
        var shardsLeft: Int
        /// When its last shard was done.
        var appliedAt: ContinuousClock.Instant?
    }

    private let threads: [DedicatedThread]
    private let condition = NSCondition()
    /// Handed over and not yet counted as applied, in order.
    private var rounds: [Round] = []
    private var nextRound = 0
    /// How many rounds started with messages for some shard: the rounds that get a duration.
    private var startedWithMessages = 0
    /// Each shard's parts of rounds, handed over and not yet taken by its thread, in order.
    private var inboxes: [[(round: Int, messages: [DeviceShard.Message], streamAdvances: [StreamClock.Advance])]]
    /// Processed messages, for the loop to let go.
    private var processed: [[DeviceShard.Message]] = []
    /// Rounds applied since the last ``takeAppliedRounds()``, in order.
    private var appliedRounds: [AppliedRound] = []

    init(count: Int) {
        threads = (0..<count).map { DedicatedThread(name: "gw-apply-\($0)") }
        inboxes = Array(repeating: [], count: count)
    }

    deinit {
        for thread in threads { thread.stop() }
    }

    /// Hands every shard's queued messages to its thread as one round, without waiting for them to be
    /// processed; first waits, if ``roundsInFlight`` rounds are still being processed, until the oldest is.
    ///
    /// - Parameters:
    ///   - shards: the shards, whose queued messages are taken.
    ///   - polledAt: when the poll that brought the messages returned.
    ///   - streamAdvances: the partitions' stream times the messages moved: every shard, with messages or not, announces
    ///     the silences of its devices they passed.
    ///   - producer: where the shards send their events and dead letters.
    ///   - feed: where the events are offered to live watchers.
    /// - Returns: the round's number (rounds are numbered from 0 in the order they start).
    func start(
        _ shards: inout ShardedDevices,
        polledAt: ContinuousClock.Instant,
        streamAdvances: [StreamClock.Advance] = [],
        producer: Producer,
        feed: EventFeed
    ) -> Int {
        precondition(shards.count <= threads.count, "more shards than apply threads")
        let parts = shards.takePending()
        let busy = parts.indices.filter { !parts[$0].isEmpty || !streamAdvances.isEmpty }
        condition.lock()
        collectAppliedRounds()
        while rounds.count >= Self.roundsInFlight {
            condition.wait()
            collectAppliedRounds()
        }
        let number = nextRound
        nextRound += 1
        rounds.append(Round(number: number, polledAt: polledAt, shardsLeft: busy.count))
        if !busy.isEmpty { startedWithMessages += 1 }
        for index in busy { inboxes[index].append((number, parts[index], streamAdvances)) }
        // A round with no messages (its offsets still count, in order) is applied at once.
        collectAppliedRounds()
        var release: [[DeviceShard.Message]] = []
        swap(&release, &processed)
        condition.unlock()
        for index in busy {
            let shard = shards.shards[index]
            threads[index].execute { [self] in processNextPart(of: shard, index: index, producer: producer, feed: feed)
            }
        }
        // Let go here, on the loop and outside the lock, while the threads process.
        release.removeAll()
        return number
    }

    /// Waits until every shard has processed and sent everything it was handed, and lets the messages go.
    func waitUntilApplied() {
        condition.lock()
        while rounds.contains(where: { $0.shardsLeft > 0 }) { condition.wait() }
        collectAppliedRounds()
        var release: [[DeviceShard.Message]] = []
        swap(&release, &processed)
        condition.unlock()
        release.removeAll()
    }

    /// How many rounds started with messages for some shard since the threads began: each gets a duration.
    var roundsWithMessages: Int {
        condition.lock()
        defer { condition.unlock() }
        return startedWithMessages
    }

    /// Whether every shard has processed everything it was handed: ``waitUntilApplied()`` would not wait.
    var hasFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !rounds.contains { $0.shardsLeft > 0 }
    }

    /// The rounds applied since the last call, in order.
    func takeAppliedRounds() -> [AppliedRound] {
        condition.lock()
        defer { condition.unlock() }
        collectAppliedRounds()
        defer { appliedRounds = [] }
        return appliedRounds
    }

    /// What each shard sent since the last call and `which` of its devices changed since they were last taken, all at
    /// once, each shard on its own thread (``DeviceShard/takeChanges(_:)``); waits until every shard has.
    ///
    /// Call after ``waitUntilApplied()``.
    func takeChanges(of shards: ShardedDevices, _ which: DeviceRegistry.Changes = .all) -> [DeviceShard.Changes] {
        precondition(shards.count <= threads.count, "more shards than apply threads")
        let taken = Mutex([DeviceShard.Changes?](repeating: nil, count: shards.count))
        let group = DispatchGroup()
        for (index, shard) in shards.shards.enumerated() {
            group.enter()
            threads[index].execute {
                let changes = shard.takeChanges(which)
                taken.withLock { $0[index] = changes }
                group.leave()
            }
        }
        group.wait()
        return taken.withLock { $0.map { $0! } }
    }

    /// On a shard's thread: processes the oldest part handed to it, then counts it done.
    private func processNextPart(of shard: DeviceShard, index: Int, producer: Producer, feed: EventFeed) {
        condition.lock()
        let (number, messages, streamAdvances) = inboxes[index].removeFirst()
        condition.unlock()
        shard.process(messages, streamAdvances: streamAdvances, producer: producer, feed: feed)
        condition.lock()
        // Moved, not copied: the loop, not this thread, lets the messages go.
        processed.append(consume messages)
        let position = rounds.firstIndex { $0.number == number }!
        rounds[position].shardsLeft -= 1
        if rounds[position].shardsLeft == 0 {
            rounds[position].appliedAt = .now
            condition.broadcast()
        }
        condition.unlock()
    }

    /// With `condition` held: counts the processed rounds at the front as applied, in order (a later round may
    /// be done before an earlier one whose other shard is slower).
    private func collectAppliedRounds() {
        while let first = rounds.first, first.shardsLeft == 0 {
            rounds.removeFirst()
            appliedRounds.append(
                AppliedRound(number: first.number, duration: first.appliedAt.map { $0 - first.polledAt })
            )
        }
    }
}
