import Foundation
import Kafka
import PartitionOffsets
import Testing

@Suite("Errors and edge cases", .timeLimit(.minutes(5)))
struct KafkaErrorTests {
    @Test("a refused configuration property is named in the error, its value is not")
    func badProperty() throws {
        let configuration = ProducerConfiguration(
            bootstrapServers: "127.0.0.1:1",
            properties: ["sasl.password.typo": "hunter2"]
        )
        let error = try #require(throws: KafkaError.self) { try Producer(configuration: configuration) }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("sasl.password.typo"))
        #expect(!error.description.contains("hunter2"))
        #expect(!error.isRetriable)
    }

    /// A producer that refuses, itself, any message over 2000 bytes (`message.max.bytes`).
    static func producerRefusingOver2000Bytes(_ cluster: TestCluster) throws -> Producer {
        try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                properties: ["message.max.bytes": "2000"]
            ),
            logger: TestCluster.logger
        )
    }

    @Test("a message the producer refuses gets a failed report; its batch-mates are still delivered")
    func oversizedMessage() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("too-large", partitions: 1)
        let producer = try Self.producerRefusingOver2000Bytes(cluster)
        let reports = await producer.send([
            ProducerRecord(topic: topic, key: nil, value: "small"),
            ProducerRecord(topic: topic, key: nil, value: [UInt8](repeating: 65, count: 10_000)),
            ProducerRecord(topic: topic, key: nil, value: "small too"),
        ]).reports()
        #expect(reports[0].isDelivered && reports[2].isDelivered)
        let failure = try #require(reports[1].error)
        #expect(failure.code == .messageSizeTooLarge)
        #expect(!failure.isRetriable && !failure.isFatal)
        await producer.close()
    }

    @Test(
        "a batch names its refused messages, and per partition the offset after its delivered ones, as its reports do"
    )
    func refusalsAndNextOffsets() throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("summed", partitions: 2)
        let other = try cluster.makeTopic("summed-too", partitions: 1)
        let producer = try Self.producerRefusingOver2000Bytes(cluster)
        defer { producer.close() }
        let oversized = [UInt8](repeating: 65, count: 10_000)
        let oneTopic = producer.send(
            [(0, "a"), (1, "b"), (0, nil), (0, "c"), (1, "d"), (1, "e")].map { partition, value in
                ProducerRecord(
                    topic: topic,
                    partition: partition,
                    key: nil,
                    value: value.map { Array($0.utf8) } ?? oversized
                )
            }
        )
        let refusals = oneTopic.waitForRefusals()
        #expect(refusals.count == 1)
        #expect(refusals.first?.error?.code == .messageSizeTooLarge)
        #expect(refusals == oneTopic.wait().filter { !$0.isDelivered })
        #expect(
            oneTopic.waitForSpans().mapValues(\.next) == [TopicPartition(topic, 0): 2, TopicPartition(topic, 1): 3]
        )
        #expect(
            oneTopic.waitForSpans() == [
                TopicPartition(topic, 0): OffsetSpan(first: 0, next: 2, count: 2),
                TopicPartition(topic, 1): OffsetSpan(first: 0, next: 3, count: 3),
            ],
            "the refused record landed nowhere"
        )

        let twoTopics = producer.send([
            ProducerRecord(topic: other, partition: 0, key: nil, value: "f"),
            ProducerRecord(topic: topic, partition: 1, key: nil, value: "g"),
        ])
        #expect(twoTopics.waitForRefusals().isEmpty)
        #expect(
            twoTopics.waitForSpans().mapValues(\.next) == [TopicPartition(other, 0): 1, TopicPartition(topic, 1): 4]
        )
        #expect(twoTopics.wait().map(\.topic) == [other, topic])
    }

    @Test("partition counts come from the cluster; a missing topic is a clear error")
    func partitionCounts() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("counted", partitions: 6)
        let producer = try cluster.producer()
        #expect(try await producer.partitionCount(topic: topic) == 6)
        let consumer = try cluster.consumer(subscription: .group(topics: [topic]))
        #expect(try await consumer.partitionCount(topic: topic) == 6)
        let error = try await #require(throws: KafkaError.self) {
            try await consumer.partitionCount(topic: "no-such-topic")
        }
        #expect(error.code == .unknownTopicOrPartition)
        #expect(error.message.contains("no-such-topic"))
        await consumer.close()
        await producer.close()
    }

    @Test("a paused partition delivers nothing until resumed, then continues where it stopped")
    func pauseAndResume() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("pause", partitions: 2)
        let paused = TopicPartition(topic, 0)
        let producer = try cluster.producer()
        let consumer = try cluster.consumer(
            subscription: .partitions([paused: .beginning, TopicPartition(topic, 1): .beginning])
        )
        try consumer.pause([paused])
        _ = await producer.sendAll(
            (0..<10).map { ProducerRecord(topic: topic, partition: Int32($0 % 2), key: nil, value: "m\($0)") }
        )
        // The other partition's five, however long a loaded machine takes to fetch them, then a second more
        // in which the paused partition must stay silent.
        var received = try await consumer.receive(5).map(\.partition)
        let until = ContinuousClock.now + .seconds(1)
        while ContinuousClock.now < until {
            received += try await consumer.nextBatch(timeout: .milliseconds(100)).map(\.partition)
        }
        #expect(received == [1, 1, 1, 1, 1])

        try consumer.resume([paused])
        let resumed = try await consumer.receive(5)
        #expect(resumed.map(\.partition) == [0, 0, 0, 0, 0])
        #expect(resumed.map(\.offset) == [0, 1, 2, 3, 4])
        await consumer.close()
        await producer.close()
    }

    @Test("sending after close reports every message as failed, none silently dropped")
    func sendAfterClose() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("closed", partitions: 1)
        let producer = try cluster.producer()
        await producer.close()
        let reports = await producer.send([ProducerRecord(topic: topic, key: nil, value: "late")]).reports()
        #expect(reports.map { $0.error?.code } == [.invalidState])
    }
}
