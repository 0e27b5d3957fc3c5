import Foundation
import Kafka
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
