import Foundation
import GeoCore
import Kafka
import Logging
import PartitionOffsets
import TestSupport
import Testing

@testable import Worker

/// The merge stage fed by a real consumer against the mock cluster, where one side's fetch comes late.
///
/// A command and the positions stamped after it are produced in that order; the commands partition's leader answers
/// slowly (a round trip of 1.5 s), so its fetch lands in the consumer's queue behind the positions, with its high
/// watermark. The commands side had been read to its end before: the merge must still apply the command first.
@Suite("The merge stage with a late fetch of one side (mock cluster)", .timeLimit(.minutes(5)))
struct MergeFetchOrderTests {
    @Test("a command fetched behind positions stamped after it is applied before them, though its side was at its end")
    func lateCommandFetch() async throws {
        let bed = try TwoLeaders()
        let (cluster, topics, producer) = (bed.cluster, bed.topics, bed.producer)
        await bed.produce(topics.commands, "track", at: 1_000)
        await bed.produce(topics.positions, "fix-0", at: 2_000)

        var driver = LoopDriver(try bed.consumer(), asking: try bed.asker(), topics: topics)
        // Both sides read to their end.
        var budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while (driver.applied.count < 2 || driver.consumer.partitionsAtEnd.count < 2) && budget.allowsAnotherLook() {
            try await driver.pollOnce()
        }
        #expect(driver.applied == ["track", "fix-0"])

        // The commands' leader slows down; an untrack, then positions stamped after it.
        try cluster.setRoundTripDelay(of: 2, to: .milliseconds(1_500))
        await bed.produce(topics.commands, "untrack", at: 3_000)
        for index in 1...20 { await bed.produce(topics.positions, "fix-\(index)", at: 3_000 + Int64(index) * 1_000) }
        // Not polled meanwhile: the positions come at once, the untrack's fetch after the round trip, behind them in
        // the consumer's queue; both fetches are in once the consumer knows both sides' new watermarks.
        budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while driver.consumer.cachedHighWatermark(of: TopicPartition(topics.commands, 0)) != 2
            || driver.consumer.cachedHighWatermark(of: TopicPartition(topics.positions, 0)) != 21
        {
            guard budget.allowsAnotherLook() else { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while driver.applied.count < 23 && budget.allowsAnotherLook() { try await driver.pollOnce() }
        #expect(driver.applied.dropFirst(2).first == "untrack", "applied in this order: \(driver.applied)")
        #expect(driver.applied.count == 23)
        await driver.close()
        await producer.close()
    }

    @Test(
        "the end-of-partition event of a fetch answered before a command was produced, polled after positions stamped later, does not let them go ahead of it"
    )
    func endOfPartitionEventOlderThanTheRecord() async throws {
        let bed = try TwoLeaders()
        // The consumer's first two fetches of the commands partition are answered late, with what the partition held
        // when the fetch came: the first (nothing yet) brings an end-of-partition event seconds after the broker made
        // it, the second the untrack. Other answers of that broker (where the partition ends, a produce) come at once.
        try bed.cluster.delayNext(1, .fetch, of: 2, by: .seconds(10))
        try bed.cluster.delayNext(1, .fetch, of: 2, by: .seconds(3))
        // The untrack is produced as soon as the broker has the first fetch: from a thread of its own, since this
        // test's tasks may wait behind other tests' for longer than the broker holds its answer.
        let untrack = TwoLeaders.untrackOnceFetched(bed)
        var driver = LoopDriver(try bed.consumer(), asking: try bed.asker(), topics: bed.topics)
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(10))
        while untrack.batch == nil && budget.allowsAnotherLook() { try await driver.pollOnce() }
        let sent = try #require(untrack.batch, "the broker never got the consumer's fetch")
        let reports = await sent.reports()
        #expect(reports.allSatisfy { $0.isDelivered }, "\(reports)")

        // Then a position stamped after it, which comes from the other leader at once, seconds before the old
        // end-of-partition event, and the untrack a slow fetch after that.
        await bed.produce(bed.topics.positions, "fix-1", at: 4_000)
        budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while driver.applied.count < 2 && budget.allowsAnotherLook() { try await driver.pollOnce() }
        #expect(driver.applied == ["untrack", "fix-1"])
        await driver.close()
        await bed.producer.close()
    }

    @Test(
        "a stream that keeps its pair busy: positions fetched while earlier ones waited for the end's confirmation wait for their own, and a command fetched behind them goes first"
    )
    func laterPollWaitsForItsOwnConfirmation() async throws {
        let bed = try TwoLeaders()
        let (cluster, topics, producer) = (bed.cluster, bed.topics, bed.producer)
        await bed.produce(topics.commands, "track", at: 1_000)
        await bed.produce(topics.positions, "fix-0", at: 2_000)
        var driver = LoopDriver(try bed.consumer(), asking: try bed.asker(), topics: topics, maxMessages: 100)
        let commands = TopicPartition(topics.commands, 0)
        // The merge's time is the test's: the waits run out when the test says so.
        let start = ContinuousClock.now
        driver.now = start
        var budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while (driver.applied.count < 2 || driver.consumer.partitionsAtEnd.count < 2) && budget.allowsAnotherLook() {
            try await driver.pollOnce()
        }
        #expect(driver.applied == ["track", "fix-0"])

        // A position comes; the commands' end does not cover its poll, and the question is asked at once: it waits.
        // The commands leader's next fetches are answered 10 s late each (its other answers at once): however long
        // this test's tasks wait for a busy machine, the untrack below does not come before the test looks.
        try cluster.delayNext(2, .fetch, of: 2, by: .seconds(10))
        await bed.produce(topics.positions, "fix-1", at: 3_000)
        budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while driver.merge.isEmpty && budget.allowsAnotherLook() {
            try await driver.poll()
            driver.release()
        }
        #expect(driver.applied == ["track", "fix-0"], "fix-1 waits for the commands' end to be confirmed")
        let askedAfter = driver.merge.poll
        let brokerEnds = try await driver.asker.offsets(.end, of: [commands])
        // Before the answer is taken, an untrack and a position stamped after it: the position comes at once, the
        // untrack with a slow fetch, behind it.
        let sent = await producer.send([
            TwoLeaders.record(topics.commands, "untrack", at: 3_500),
            TwoLeaders.record(topics.positions, "fix-2", at: 4_000),
        ])
        budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while driver.consumer.cachedHighWatermark(of: TopicPartition(topics.positions, 0)) != 3
            && budget.allowsAnotherLook()
        {
            try await driver.poll()
        }
        try await driver.poll()
        // The answer, 300 ms after fix-1 began to wait, covers fix-1's poll, not fix-2's: fix-1 goes, fix-2 waits for
        // its own confirmation (by then the untrack has come).
        driver.now = start + .milliseconds(300)
        driver.confirm(brokerEnds, askedAfterPoll: askedAfter)
        #expect(driver.applied == ["track", "fix-0", "fix-1"], "fix-2 is not released on fix-1's wait")
        // The untrack comes with a slow fetch: up to two of them.
        budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(20))
        while driver.applied.count < 5 && budget.allowsAnotherLook() { try await driver.pollOnce() }
        #expect(driver.applied == ["track", "fix-0", "fix-1", "untrack", "fix-2"])
        let reports = await sent.reports()
        #expect(reports.allSatisfy { $0.isDelivered }, "\(reports)")
        await driver.close()
        await producer.close()
    }
}

/// Two topics of one partition on a mock cluster of two brokers: the positions led by broker 1, the commands by broker
/// 2 (the one a test slows down), with a producer, and a consumer of both from the beginning.
private struct TwoLeaders {
    let cluster: MockCluster
    let topics: WorkerConfiguration.Topics
    let producer: Producer

    init() throws {
        cluster = try MockCluster(brokers: 2, logger: .quiet("test.merge"))
        let suffix = UUID().uuidString.prefix(8)
        topics = WorkerConfiguration.Topics(
            positions: "positions-\(suffix)",
            commands: "commands-\(suffix)",
            events: "events-\(suffix)",
            deadLetters: "dead-letters-\(suffix)"
        )
        try cluster.createTopic(topics.positions, partitions: 1)
        try cluster.createTopic(topics.commands, partitions: 1)
        try cluster.setLeader(of: topics.positions, partition: 0, to: 1)
        try cluster.setLeader(of: topics.commands, partition: 0, to: 2)
        producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: .quiet("test.merge")
        )
    }

    /// A record of partition 0 of `topic`, `value` as its text, stamped `time`.
    static func record(_ topic: String, _ value: String, at time: Int64) -> ProducerRecord {
        ProducerRecord(topic: topic, partition: 0, key: nil, value: Array(value.utf8), timestampMilliseconds: time)
    }

    /// Sends `value` to partition 0 of `topic`, stamped `time`, and expects it delivered.
    func produce(_ topic: String, _ value: String, at time: Int64) async {
        let report = await producer.send(Self.record(topic, value, at: time))
        #expect(report.isDelivered, "\(report)")
    }

    /// Sends an untrack stamped 3,000 to the commands partition as soon as broker 2 has used up all but one of its
    /// delayed fetches (it has the consumer's first), on a thread of its own.
    static func untrackOnceFetched(_ bed: TwoLeaders) -> SentFromAThread {
        let sent = SentFromAThread()
        let (cluster, producer, commands) = (bed.cluster, bed.producer, bed.topics.commands)
        Thread.detachNewThread {
            while ((try? cluster.delaysLeft(.fetch, of: 2)) ?? 0) > 1 { usleep(1_000) }
            sent.batch = producer.send([record(commands, "untrack", at: 3_000)])
        }
        return sent
    }

    /// A consumer that reads nothing, to ask where partitions end.
    func asker() throws -> Consumer {
        try Consumer(
            configuration: ConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupId: "asker-\(UUID().uuidString.prefix(8))"
            ),
            subscription: .partitions([:]),
            logger: .quiet("test.merge")
        )
    }

    /// A consumer of both topics from the beginning, in a group of its own.
    func consumer() throws -> Consumer {
        try Consumer(
            configuration: ConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupId: "merge-\(UUID().uuidString.prefix(8))"
            ),
            subscription: .partitions([
                TopicPartition(topics.positions, 0): .beginning, TopicPartition(topics.commands, 0): .beginning,
            ]),
            logger: .quiet("test.merge")
        )
    }
}

/// The merge fed by a consumer as the worker's loop feeds it: a poll, release, the ends that held a side back asked of
/// the brokers, release again; what it releases is applied in order (each record's text).
///
/// A test may take the steps one by one, and give the merge its own time.
private struct LoopDriver {
    let consumer: Consumer
    /// Asks where partitions end on connections of its own, as the worker's ``EndQuestions`` does: behind the
    /// consumer's fetch in flight to a slow leader, a question would wait for that fetch.
    let asker: Consumer
    private(set) var merge: InputMerge<ConsumerRecord>
    private let topics: WorkerConfiguration.Topics
    private let maxMessages: Int
    private(set) var applied: [String] = []
    /// The merge's time: the clock's when nil.
    var now: ContinuousClock.Instant?

    init(_ consumer: Consumer, asking asker: Consumer, topics: WorkerConfiguration.Topics, maxMessages: Int = 1) {
        self.consumer = consumer
        self.asker = asker
        self.topics = topics
        self.maxMessages = maxMessages
        merge = InputMerge(topics: topics, mergeWait: .milliseconds(200))
    }

    func close() async {
        await consumer.close()
        await asker.close()
    }

    /// A round of the loop: poll, release, and the ends that held a side back confirmed.
    mutating func pollOnce() async throws {
        try await poll()
        release()
        try await confirmUnconfirmedEnds()
    }

    /// One poll, its records handed to the merge.
    mutating func poll() async throws {
        let batch = try await consumer.nextBatch(maxMessages: maxMessages, timeout: .milliseconds(20))
        merge.polled()
        for record in batch {
            merge.append(record, kind: record.topic == topics.commands ? .commands : .positions)
        }
    }

    /// What the merge lets go, applied.
    mutating func release() {
        merge.release(
            atEnd: consumer.endOffsets,
            highWatermark: consumer.cachedHighWatermark(of:),
            now: now ?? .now,
            into: &applied
        ) { applied, record, _, _, _ in applied.append(String(decoding: record.value ?? [], as: UTF8.self)) }
    }

    /// As the loop does: the ends that held a side back, asked of the brokers after this poll, then release.
    mutating func confirmUnconfirmedEnds() async throws {
        let unconfirmed = merge.takeUnconfirmedEnds()
        guard !unconfirmed.isEmpty else { return }
        let asked = merge.poll
        confirm(try await asker.offsets(.end, of: Array(unconfirmed)), askedAfterPoll: asked)
    }

    /// The brokers' answer, asked after poll `asked`, given to the merge; then release.
    mutating func confirm(_ brokerEnds: [TopicPartition: Int64], askedAfterPoll asked: Int) {
        merge.confirmEnds(brokerEnds, askedAfterPoll: asked, readTo: consumer.endOffsets)
        release()
    }
}

/// What a thread of a test sent, once it has.
private final class SentFromAThread: @unchecked Sendable {
    // @unchecked: `batch` is guarded by `lock`.
    private let lock = NSLock()
    private var sent: DeliveryBatch?

    var batch: DeliveryBatch? {
        get { lock.withLock { sent } }
        set { lock.withLock { sent = newValue } }
    }
}
