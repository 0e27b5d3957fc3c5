import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing
import Threads

/// Kafka transactions through ``Producer``, against noida-db (librdkafka's mock writes no transaction markers, so
/// its readers cannot tell a committed record from an aborted one).
///
/// Ten minutes like the other suites on noida-db: under the whole suite's load on a fresh CI machine its transactions
/// took longer than three.
@Suite("Transactions on noida-db", .timeLimit(.minutes(10)))
struct TransactionTests {
    @Test("records and input offsets become visible together at the commit; aborted, left-open and fenced ones never")
    func commitAbortFence() async throws {
        let broker = try await NoidaBroker()
        let (input, output) = ("in-\(UUID().uuidString.prefix(6))", "out-\(UUID().uuidString.prefix(6))")
        try broker.createTopic(input, partitions: 1)
        try broker.createTopic(output, partitions: 1)
        let plain = try Producer(configuration: ProducerConfiguration(bootstrapServers: broker.bootstrapServers))
        _ = await plain.sendAll((0..<3).map { ProducerRecord(topic: input, key: "k", value: "in \($0)") })
        await plain.close()

        let group = "transactions-\(UUID().uuidString.prefix(6))"
        // Assigned rather than subscribed: a group join on a loaded machine takes noida-db minutes, and the offsets
        // go to the group by its id whichever way the partitions came.
        let member = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: broker.bootstrapServers, groupId: group),
            subscription: .partitions([TopicPartition(input, 0): .beginning])
        )
        #expect(try await member.receive(3).count == 3)

        let id = "\(group)-tx"
        let fenced = try await DedicatedThread.runOnce(name: "transactions") { () throws -> KafkaError? in
            try runTransactions(broker, id: id, output: output, offsets: [TopicPartition(input, 0): 3], of: member)
        }
        #expect(fenced?.isFatal == true, "the fenced producer's commit: \(String(describing: fenced))")

        let committed = try reader(broker, output, isolation: "read_committed")
        let seen = try await committed.receive(2).map(\.value)
        let more = try await committed.nextBatch(timeout: .seconds(2))
        #expect(
            seen == ["committed", "after the fence"] && more.isEmpty,
            "read_committed saw \(seen), then \(more.count)"
        )
        let everything = try reader(broker, output, isolation: "read_uncommitted")
        #expect(
            try await everything.receive(4).map(\.value) == ["committed", "aborted", "left open", "after the fence"]
        )
        let offsets = try await member.committedOffsets(for: [TopicPartition(input, 0)])
        #expect(offsets == [TopicPartition(input, 0): 3], "the group's offsets: \(offsets)")
        await member.close()
        await committed.close()
        await everything.close()
    }

    /// The abort names where its records landed, for readers that do not honour aborts (and for any reader on a
    /// broker that writes no transaction markers) to leave out; a record another producer wrote between them in the same
    /// partition (the next owner of a partition, in a handover) is not named, or such a reader would drop it too.
    @Test("an abort names exactly where its records landed, not another producer's record between them")
    func abortNamesItsOwnRecords() async throws {
        let broker = try await NoidaBroker()
        let output = "out-\(UUID().uuidString.prefix(6))"
        try broker.createTopic(output, partitions: 1)
        let other = try Producer(configuration: ProducerConfiguration(bootstrapServers: broker.bootstrapServers))
        let partition = TopicPartition(output, 0)
        let (landed, between) = try await DedicatedThread.runOnce(name: "transactions") {
            () throws -> ([TopicPartition: OffsetRuns], Int64?) in
            let producer = try transactionalProducer(broker, id: "abort-\(UUID().uuidString.prefix(6))")
            defer { producer.close(timeout: .zero) }
            try producer.initTransactions()
            try producer.beginTransaction()
            let record = { (value: String) in ProducerRecord(topic: output, key: "k", value: value) }
            #expect(producer.send([record("aborted 1")]).waitForRefusals().isEmpty)
            let between = other.send([record("between")]).wait().first?.offset
            #expect(producer.send([record("aborted 2")]).waitForRefusals().isEmpty)
            return (try producer.abortTransaction(), between)
        }
        await other.close()
        let betweenOffset = try #require(between)
        let everything = try reader(broker, output, isolation: "read_uncommitted")
        let records = try await everything.receive(3)
        await everything.close()
        let named = records.filter { Self.names(landed[partition], $0.offset) }.map(\.value)
        #expect(
            named == ["aborted 1", "aborted 2"],
            "the abort named \(String(describing: landed)); \(betweenOffset) is \"between\""
        )
    }

    /// Whether an abort's answer for a partition names `offset`.
    private static func names(_ landed: OffsetRuns?, _ offset: Int64) -> Bool {
        landed?.contains(offset) ?? false
    }

    /// Commits a transaction with `offsets`, aborts one, leaves one open; then a producer with the same id commits one.
    ///
    /// Returns what the first producer's commit after the fence threw.
    private func runTransactions(
        _ broker: NoidaBroker,
        id: String,
        output: String,
        offsets: [TopicPartition: Int64],
        of member: Consumer
    ) throws -> KafkaError? {
        let first = try transactionalProducer(broker, id: id)
        defer { first.close(timeout: .zero) }
        try first.initTransactions()
        try first.beginTransaction()
        _ = first.send([ProducerRecord(topic: output, key: "k", value: "committed")])
        try first.sendOffsetsToTransaction(offsets, of: member)
        try first.commitTransaction()
        try first.beginTransaction()
        // Delivered before the abort, so that the broker holds it and must hide it.
        let aborted = first.send([ProducerRecord(topic: output, key: "k", value: "aborted")]).wait()
        #expect(aborted.allSatisfy { $0.isDelivered })
        // The abort says where what it aborted landed: a reader that does not honour aborts sees it there.
        let landed = try first.abortTransaction()
        let offset = try #require(aborted.first?.offset)
        #expect(landed == [TopicPartition(output, 0): OffsetRuns([offset..<(offset + 1)])])
        try first.beginTransaction()
        let leftOpen = first.send([ProducerRecord(topic: output, key: "k", value: "left open")])
        #expect(leftOpen.waitForRefusals().isEmpty)

        // A producer with the same id, as a restarted instance has: the open transaction is aborted, the first fenced.
        let second = try transactionalProducer(broker, id: id)
        defer { second.close() }
        try second.initTransactions()
        try second.beginTransaction()
        _ = second.send([ProducerRecord(topic: output, key: "k", value: "after the fence")])
        try second.commitTransaction()
        do {
            try first.commitTransaction()
            return nil
        } catch {
            return error
        }
    }

    private func transactionalProducer(_ broker: NoidaBroker, id: String) throws -> Producer {
        try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                deliveryTimeout: .seconds(30),
                transactionalId: id
            ),
            logger: TestCluster.logger
        )
    }

    private func reader(_ broker: NoidaBroker, _ topic: String, isolation: String) throws -> Consumer {
        try Consumer(
            configuration: ConsumerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                groupId: "reader-\(UUID().uuidString.prefix(6))",
                properties: ["isolation.level": isolation]
            ),
            subscription: .partitions([TopicPartition(topic, 0): .beginning])
        )
    }
}
