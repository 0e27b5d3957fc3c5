import Foundation
import Kafka
import PartitionOffsets
import Synchronization
import TestSupport
import Testing

@Suite("Consumer groups", .timeLimit(.minutes(5)))
struct ConsumerGroupTests {
    /// What one member's revoke hook saw, recorded from inside the hook.
    final class RevokeLog: Sendable {
        struct Entry {
            let revoked: Set<TopicPartition>
            let heldDuringHook: Set<TopicPartition>
            let storeError: KafkaError?
        }
        let entries = Mutex<[Entry]>([])
        let consumer = Mutex<Consumer?>(nil)
    }

    @Test(
        "two members split the partitions; the revoke hook runs while they are still held; a leaver's partitions move"
    )
    func splitAndTakeOver() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("group", partitions: 4)
        let all = Set((0..<4).map { TopicPartition(topic, Int32($0)) })
        let group = "group-\(UUID().uuidString.prefix(8))"
        let producer = try cluster.producer()
        _ = await producer.sendAll(
            (0..<40).map { ProducerRecord(topic: topic, partition: Int32($0 % 4), key: nil, value: "old-\($0)") }
        )

        // Member A's revoke hook finishes its "batch in flight" by storing the progress of every partition it is
        // about to lose, which librdkafka accepts only for partitions the consumer still holds. (A group commit
        // from the hook is refused by librdkafka's mock coordinator while the group is joining, though real
        // brokers accept it; geoworker keeps its offsets in its own store and does not rely on it.)
        let log = RevokeLog()
        let handler = RebalanceHandler(onRevoke: { partitions, _ in
            // A revoke after the test has stopped watching (librdkafka may run the last one as the handle is
            // destroyed, after the test let go of the consumer, or after a failed step) has nothing to record.
            guard let consumer = log.consumer.withLock({ $0 }) else { return }
            let held = consumer.assignment
            var storeError: KafkaError?
            do throws(KafkaError) {
                try consumer.storeOffsets(Dictionary(uniqueKeysWithValues: partitions.map { ($0, Int64(10)) }))
            } catch {
                storeError = error
            }
            log.entries.withLock {
                $0.append(.init(revoked: Set(partitions), heldDuringHook: held, storeError: storeError))
            }
        })
        // The group's side of each member, kept for a failure to show: in full test runs the split has been seen
        // stuck with one member holding two partitions and the other none.
        let recorder = LogRecorder()
        let memberA = try cluster.consumer(
            group: group,
            subscription: .group(topics: [topic]),
            rebalanceHandler: handler,
            logger: recorder.logger("A"),
            properties: ["debug": "cgrp"]
        )
        log.consumer.withLock { $0 = memberA }
        defer { log.consumer.withLock { $0 = nil } }

        let first = try await memberA.receive(40)
        #expect(first.count == 40)
        #expect(memberA.assignment == all)
        try await memberA.commit(Dictionary(uniqueKeysWithValues: all.map { ($0, Int64(10)) }))

        // B joins: both must keep polling for the group to rebalance.
        let memberB = try cluster.consumer(
            group: group,
            subscription: .group(topics: [topic]),
            logger: recorder.logger("B"),
            properties: ["debug": "cgrp"]
        )
        do {
            try await pollBoth(memberA, memberB, "the partitions to be split") {
                memberA.assignment.count == 2 && memberB.assignment.count == 2
            }
        } catch let timedOut as TimedOut {
            // Without the answers to the test's own questions (each look asks both members for their assignment).
            let lines = recorder.last(2_000).filter { !$0.contains("received op GET_") }.suffix(100)
            throw TimedOut(description: "\(timedOut); the members' last log lines:\n" + lines.joined(separator: "\n"))
        }
        #expect(memberA.assignment.union(memberB.assignment) == all)
        #expect(memberA.assignment.isDisjoint(with: memberB.assignment))

        let revokes = log.entries.withLock { $0 }
        let revoke = try #require(revokes.first)
        #expect(revoke.revoked == all, "eager rebalancing takes back everything before redistributing")
        #expect(revoke.heldDuringHook.isSuperset(of: revoke.revoked), "the hook must run before the partitions go")
        #expect(
            revoke.storeError == nil,
            "storing offsets from the hook failed: \(String(describing: revoke.storeError))"
        )

        // B starts where A committed: it sees only new messages.
        let bPartitions = memberB.assignment
        _ = await producer.sendAll(
            (0..<4).map { ProducerRecord(topic: topic, partition: Int32($0), key: nil, value: "new-\($0)") }
        )
        let forB = try await memberB.receive(2)
        #expect(Set(forB.map(\.topicPartition)) == bPartitions)
        #expect(forB.allSatisfy { $0.offset == 10 && $0.value!.hasPrefix("new-") })

        // B leaves: A takes its partitions over.
        await memberB.close()
        try await memberA.poll(until: { memberA.assignment == all }, "member A to take over")
        await memberA.close()
        await producer.close()
    }

    /// Polls two consumers in turn until `condition` holds, failing after `timeout` (see ``WaitBudget``).
    ///
    /// One look polls both: the rebalance needs each to poll, and a task of its own per consumer let one of them use
    /// up the budget while the other, not resumed on a busy machine, had hardly polled at all.
    private func pollBoth(
        _ first: Consumer,
        _ second: Consumer,
        _ what: String,
        timeout: Duration = .seconds(30),
        until condition: () -> Bool
    ) async throws {
        var budget = WaitBudget(timeout, lookingEvery: .milliseconds(100))
        let started = ContinuousClock.now
        while !condition() {
            guard budget.allowsAnotherLook() else {
                // What each member held when the wait gave up: which side of the rebalance did not come.
                let held = "\(first.assignment.count) and \(second.assignment.count) partitions held"
                throw TimedOut(description: "waiting for \(what) (\(held), \(ContinuousClock.now - started) waited)")
            }
            _ = try await first.nextBatch(timeout: .milliseconds(50))
            _ = try await second.nextBatch(timeout: .milliseconds(50))
        }
    }

    @Test("hooks given to a poll and to the close run instead of the consumer's own, and only inside that call")
    func hooksOfTheCall() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("hooks", partitions: 2)
        let own = Mutex<[String]>([])
        let consumer = try cluster.consumer(
            subscription: .group(topics: [topic]),
            rebalanceHandler: RebalanceHandler(
                onAssign: { partitions in
                    own.withLock { $0.append("assign \(partitions.count)") }
                    return [:]
                },
                onRevoke: { partitions, _ in own.withLock { $0.append("revoke \(partitions.count)") } }
            )
        )
        // Plain state of the caller's, changed by the hooks without a lock: they run on this thread, inside the poll.
        var assigned: [TopicPartition] = []
        var revoked: [TopicPartition] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while assigned.isEmpty && ContinuousClock.now < deadline {
            _ = try consumer.poll(
                timeout: .milliseconds(100),
                onAssign: { partitions in
                    assigned += partitions
                    return [:]
                },
                onRevoke: { partitions, _ in revoked += partitions }
            )
        }
        #expect(Set(assigned) == [TopicPartition(topic, 0), TopicPartition(topic, 1)])
        consumer.close(onRevoke: { partitions, _ in revoked += partitions })
        #expect(Set(revoked) == Set(assigned), "leaving the group revokes through the close's hook")
        #expect(own.withLock { $0 }.isEmpty, "the consumer's own hooks never ran: \(own.withLock { $0 })")
    }

    @Test("an assignment librdkafka does not take after the assign hook answered (a fatal error meanwhile) is revoked")
    func assignmentNotTaken() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("refused", partitions: 2)
        // A static member: librdkafka raises fatal errors only for those (and idempotent producers).
        let consumer = try cluster.consumer(
            subscription: .group(topics: [topic]),
            properties: ["group.instance.id": "refused"]
        )
        var assigned: [TopicPartition] = []
        var revoked: [(partitions: [TopicPartition], isLost: Bool)] = []
        var failed = false
        let deadline = ContinuousClock.now + .seconds(30)
        while revoked.isEmpty && !failed && ContinuousClock.now < deadline {
            do {
                _ = try consumer.poll(
                    timeout: .milliseconds(100),
                    onAssign: { partitions in
                        assigned += partitions
                        // As a static member fenced by another with its instance id, between the hook and the assign.
                        consumer.raiseFatalErrorForTesting("fenced while assigning")
                        return [:]
                    },
                    onRevoke: { partitions, isLost in revoked.append((partitions, isLost)) }
                )
            } catch {
                #expect(error.isFatal, "a poll after the fatal error: \(error)")
                failed = true
            }
        }
        #expect(Set(assigned) == [TopicPartition(topic, 0), TopicPartition(topic, 1)])
        #expect(revoked.count == 1 && Set(revoked[0].partitions) == Set(assigned) && revoked[0].isLost)
        #expect(consumer.assignment.isEmpty, "the consumer holds \(consumer.assignment)")
        consumer.close()
    }

}

extension ReceivedRecord {
    var topicPartition: TopicPartition { TopicPartition(topic, partition) }
}
