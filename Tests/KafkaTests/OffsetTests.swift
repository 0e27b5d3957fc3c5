import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing

@Suite("Offsets", .timeLimit(.minutes(5)))
struct OffsetTests {
    @Test("a restarted member resumes after the offsets stored and committed for what it processed")
    func restartResumesAtCommittedOffset() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("offsets", partitions: 1)
        let partition = TopicPartition(topic, 0)
        let group = "group-\(UUID().uuidString.prefix(8))"
        let producer = try cluster.producer()
        _ = await producer.sendAll((0..<10).map { ProducerRecord(topic: topic, key: nil, value: "m\($0)") })

        let first = try cluster.consumer(group: group, subscription: .group(topics: [topic]))
        let received = try await first.receive(10)
        #expect(received.map(\.offset) == Array(0..<10))
        // Only the first six were "processed": their progress is the offset of the seventh.
        try first.storeOffsets([partition: 6])
        try await first.commit()
        #expect(try await first.committedOffsets(for: [partition]) == [partition: 6])
        await first.close()

        let restarted = try cluster.consumer(group: group, subscription: .group(topics: [topic]))
        let resumed = try await restarted.receive(4)
        #expect(resumed.map(\.offset) == [6, 7, 8, 9])
        #expect(resumed.map(\.value) == ["m6", "m7", "m8", "m9"])
        await restarted.close()
        await producer.close()
    }

    @Test("offsets returned by the assign hook are where each partition starts")
    func assignHookSeeks() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("seek", partitions: 2)
        let producer = try cluster.producer()
        _ = await producer.sendAll(
            (0..<20).map { ProducerRecord(topic: topic, partition: Int32($0 % 2), key: nil, value: "m\($0)") }
        )

        // As the worker does with offsets it keeps in its own store: partition 0 from 7, partition 1 from 3.
        let stored: [TopicPartition: Int64] = [TopicPartition(topic, 0): 7, TopicPartition(topic, 1): 3]
        let consumer = try cluster.consumer(
            subscription: .group(topics: [topic]),
            rebalanceHandler: RebalanceHandler(onAssign: { partitions in stored.filter { partitions.contains($0.key) } }
            )
        )
        let received = try await consumer.receive(3 + 7)
        #expect(received.filter { $0.partition == 0 }.map(\.offset) == [7, 8, 9])
        #expect(received.filter { $0.partition == 1 }.map(\.offset) == [3, 4, 5, 6, 7, 8, 9])
        await consumer.close()
        await producer.close()
    }

    @Test("the beginning and the end of several partitions, looked up at once, are their first and next offsets")
    func beginningAndEnd() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("ends", partitions: 3)
        let producer = try cluster.producer()
        // 5 records in partition 0, 2 in partition 1, none in partition 2.
        _ = await producer.sendAll(
            (0..<7).map { ProducerRecord(topic: topic, partition: $0 < 5 ? 0 : 1, key: nil, value: "m\($0)") }
        )
        let partitions = (0..<3).map { TopicPartition(topic, Int32($0)) }
        let consumer = try cluster.consumer(subscription: .partitions([:]))
        #expect(
            try await consumer.offsets(.beginning, of: partitions) == [
                partitions[0]: 0, partitions[1]: 0, partitions[2]: 0,
            ]
        )
        #expect(
            try await consumer.offsets(.end, of: partitions) == [partitions[0]: 5, partitions[1]: 2, partitions[2]: 0]
        )
        await consumer.close()
        await producer.close()
    }

    @Test("'reached the end of every assigned partition' holds only once everything produced has been read")
    func endOfAssignment() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("eof", partitions: 3)
        let producer = try cluster.producer()
        _ = await producer.sendAll(
            (0..<30).map { ProducerRecord(topic: topic, partition: Int32($0 % 3), key: nil, value: "m\($0)") }
        )

        let partitions = (0..<3).map { TopicPartition(topic, Int32($0)) }
        let consumer = try cluster.consumer(
            subscription: .partitions(Dictionary(uniqueKeysWithValues: partitions.map { ($0, .beginning) }))
        )
        #expect(consumer.assignment == Set(partitions))
        #expect(!consumer.hasReachedEndOfAssignment)

        var received: [ReceivedRecord] = []
        /// Polls until the consumer says it is at the end, checking at every step that it never says so early.
        func readToEnd(expecting produced: Int) async throws {
            var budget = WaitBudget(.seconds(20), lookingEvery: .milliseconds(100))
            repeat {
                guard budget.allowsAnotherLook() else { throw TimedOut(description: "reaching the end") }
                received += try await consumer.nextBatch(timeout: .milliseconds(100)).map(ReceivedRecord.init)
                if consumer.hasReachedEndOfAssignment {
                    #expect(received.count == produced, "claimed the end after \(received.count) of \(produced)")
                }
            } while !consumer.hasReachedEndOfAssignment
        }

        try await readToEnd(expecting: 30)
        #expect(consumer.partitionsAtEnd == Set(partitions))

        _ = await producer.sendAll([ProducerRecord(topic: topic, partition: 1, key: nil, value: "late")])
        // Until librdkafka fetches the late message it cannot know of it; once read, the end needs it counted.
        var budget = WaitBudget(.seconds(20), lookingEvery: .milliseconds(100))
        while !received.contains(where: { $0.value == "late" }) && budget.allowsAnotherLook() {
            received += try await consumer.nextBatch(timeout: .milliseconds(100)).map(ReceivedRecord.init)
        }
        try await readToEnd(expecting: 31)
        #expect(received.count == 31)

        // Sought back, a partition is not at its end until it has been read to its end again.
        func seekBack() throws { try consumer.seek([TopicPartition(topic, 2): 0]) }
        try seekBack()
        #expect(!consumer.hasReachedEndOfAssignment, "a partition sought back has messages to give again")
        #expect(consumer.partitionsAtEnd == Set(partitions.prefix(2)))
        try await readToEnd(expecting: 41)
        await consumer.close()
        await producer.close()
    }
}
