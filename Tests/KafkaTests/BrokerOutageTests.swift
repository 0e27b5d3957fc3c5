import Foundation
import Kafka
import PartitionOffsets
import Synchronization
import TestSupport
import Testing

@Suite("Broker outage", .timeLimit(.minutes(5)))
struct BrokerOutageTests {
    @Test("messages produced while the broker is down are delivered once it is back, each exactly once")
    func outageLosesNothing() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("outage", partitions: 2)
        let producer = try cluster.producer()
        let consumer = try cluster.consumer(subscription: .group(topics: [topic]))

        _ = await producer.sendAll(
            (0..<20).map { ProducerRecord(topic: topic, key: "k\($0 % 4)", value: "before-\($0)") }
        )
        let before = try await consumer.receive(20)

        try cluster.cluster.takeBrokerDown(1)
        let during = await producer.send(
            (0..<30).map { ProducerRecord(topic: topic, key: "k\($0 % 4)", value: "during-\($0)") }
        )
        // A window to watch, not a condition to wait for: nothing is delivered during it.
        try await Task.sleep(for: .seconds(2))
        #expect(!during.isComplete, "nothing can be delivered while the only broker is down")

        try cluster.cluster.bringBrokerUp(1)
        let reports = await during.reports()
        #expect(reports.allSatisfy { $0.isDelivered }, "undelivered: \(reports.filter { !$0.isDelivered })")

        let expected = Set((0..<20).map { "before-\($0)" } + (0..<30).map { "during-\($0)" })
        let after = try await consumer.receive(30, timeout: .seconds(60))
        #expect(Set((before + after).map { $0.value ?? "" }) == expected, "the group member gets every message")

        // Exactly once is a property of the log, so read the log itself, outside any group: when the
        // coordinator was down long enough for the member's session to expire, the member rejoins and reads
        // again from the start (nothing was committed), which is not a duplicate in the topic.
        let partitions = [TopicPartition(topic, 0), TopicPartition(topic, 1)]
        var lengths: [Int64] = []
        for partition in partitions { lengths.append(try await consumer.watermarks(of: partition).high) }
        #expect(lengths.reduce(0, +) == 50, "the topic holds each message once")
        let reader = try cluster.consumer(
            subscription: .partitions(Dictionary(uniqueKeysWithValues: partitions.map { ($0, .beginning) }))
        )
        let logged = try await reader.receive(50, timeout: .seconds(60)).map { $0.value ?? "" }
        #expect(logged.count == 50 && Set(logged) == expected)
        await reader.close()
        await consumer.close()
        await producer.close()
    }
}

@Suite("A group coordinator that never answers", .timeLimit(.minutes(5)))
struct UnansweredGroupTests {
    /// A cluster of one broker, a topic of two partitions, and a group member that has read the topic's one record.
    private func joinedMember(_ prefix: String) async throws -> (TestCluster, String, Consumer) {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic(prefix, partitions: 2)
        let producer = try cluster.producer()
        _ = await producer.sendAll([ProducerRecord(topic: topic, key: "k", value: "v")])
        await producer.close()
        let consumer = try cluster.consumer(subscription: .group(topics: [topic]))
        _ = try await consumer.receive(1)
        return (cluster, topic, consumer)
    }

    /// Takes the only broker down while it holds the member's next commit unanswered: the commit is sent and never
    /// answered, as a checkpoint's is when the coordinator goes down with it in hand.
    ///
    /// The broker holds the answer (a minute) rather than the test guessing how long the commit takes to arrive: on a
    /// loaded machine a commit that reached the broker before the outage was answered, and the member had nothing
    /// left to wait for.
    private func holdNextCommitThenGoDown(_ cluster: TestCluster, _ sendCommit: () throws -> Void) async throws {
        try cluster.cluster.delayNext(1, .offsetCommit, of: 1, by: .seconds(60))
        try sendCommit()
        var budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(20))
        while try cluster.cluster.delaysLeft(.offsetCommit, of: 1) > 0, budget.allowsAnotherLook() {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try cluster.cluster.delaysLeft(.offsetCommit, of: 1) == 0, "the broker got the commit")
        try cluster.cluster.takeBrokerDown(1)
    }

    @Test("a commit sent just before the only broker goes down throws timedOut at the session timeout")
    func commitWithoutAnswer() async throws {
        let (cluster, topic, consumer) = try await joinedMember("commit-down")
        defer { try? cluster.cluster.bringBrokerUp(1) }

        // The commit waits on a thread of its own: one that never returns must fail this test, not hang it.
        let outcome = Mutex<Result<Void, KafkaError>?>(nil)
        try await holdNextCommitThenGoDown(cluster) {
            Thread.detachNewThread {
                let result = Result { () throws(KafkaError) in try consumer.commit([TopicPartition(topic, 0): 1]) }
                outcome.withLock { $0 = result }
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while outcome.withLock({ $0 == nil }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let seen = outcome.withLock { $0 }
        #expect(seen != nil, "the commit returned (session timeout 6 s; waited 60 s)")
        if case .failure(let error)? = seen {
            #expect(error.code == .timedOut, "\(error)")
        } else {
            Issue.record("the commit was not answered, yet did not fail: \(String(describing: seen))")
        }
    }

    @Test("a commit waiting for a coordinator that went down gives up when its caller does, before the session timeout")
    func commitGivenUp() async throws {
        let (cluster, topic, consumer) = try await joinedMember("commit-given-up")
        defer { try? cluster.cluster.bringBrokerUp(1) }

        let giveUp = Mutex(false)
        let outcome = Mutex<Result<Void, KafkaError>?>(nil)
        try await holdNextCommitThenGoDown(cluster) {
            Thread.detachNewThread {
                let result = Result { () throws(KafkaError) in
                    try consumer.commit([TopicPartition(topic, 0): 1], giveUpWhen: { giveUp.withLock { $0 } })
                }
                outcome.withLock { $0 = result }
            }
        }
        giveUp.withLock { $0 = true }
        let deadline = ContinuousClock.now + .seconds(60)
        while outcome.withLock({ $0 == nil }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        guard case .failure(let error)? = outcome.withLock({ $0 }) else {
            Issue.record("the commit was neither given up nor failed: \(String(describing: outcome.withLock { $0 }))")
            return
        }
        #expect(error.code == .timedOut, "\(error)")
        // Not the session timeout's message: the wait ended because its caller gave it up.
        #expect("\(error)".contains("given up"), "\(error)")
    }

    @Test(
        "a group member that lost its partitions in an outage closes while its broker is still down: its close returns at the session timeout and letting it go does not block"
    )
    func closeWithoutBroker() async throws {
        let (cluster, topic, member) = try await joinedMember("close-down")
        // The thread below lets go of the last reference.
        let consumer = Mutex<Consumer?>(consume member)
        // A commit sent and never answered, as a checkpoint's when the broker goes down: the unassignment at the
        // loss, and the close after it, wait for it.
        defer { try? cluster.cluster.bringBrokerUp(1) }
        try await holdNextCommitThenGoDown(cluster) {
            try consumer.withLock { $0! }.commitInBackground([TopicPartition(topic, 0): 1])
        }

        // Polled past its session (6 s) with no broker, the member loses its partitions and looks for a coordinator
        // to rejoin through; the close, and the last release, run on this thread of their own: a close that never
        // returns must fail this test, not hang it.
        struct Outcome { var lost: [TopicPartition], leftCleanly: Bool, released: Bool }
        let outcome = Mutex<Outcome?>(nil)
        Thread.detachNewThread {
            var held = consumer.withLock { taken in
                defer { taken = nil }
                return taken
            }
            var lost: [TopicPartition] = []
            let pollingEnds = ContinuousClock.now + .seconds(9)
            while ContinuousClock.now < pollingEnds {
                _ = try? held!.poll(
                    timeout: .milliseconds(100),
                    onAssign: { _ in [:] },
                    onRevoke: { partitions, isLost in if isLost { lost += partitions } }
                )
            }
            let left = held!.close(onRevoke: { _, _ in })
            outcome.withLock { $0 = Outcome(lost: lost, leftCleanly: left, released: false) }
            held = nil
            outcome.withLock { $0?.released = true }
        }
        let deadline = ContinuousClock.now + .seconds(70)
        while outcome.withLock({ $0?.released != true }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let seen = outcome.withLock { $0 }
        #expect(seen?.lost.count == 2, "the member lost both partitions while the broker was down")
        #expect(seen != nil, "the close returned (session timeout 6 s; waited 60 s after the polls)")
        #expect(seen?.released == true, "letting the consumer go returned (its client is destroyed in the background)")
        #expect(seen?.leftCleanly == false, "no broker answered: the close says it did not leave the group")
    }
}
