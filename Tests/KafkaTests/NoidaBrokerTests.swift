import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing

/// The test broker itself: what the suite's tests on noida-db rely on.
@Suite("noida-db as the suite's broker", .timeLimit(.minutes(10)))
struct NoidaBrokerTests {
    @Test("a topic it creates keeps records stamped weeks ago: the suite's traffic has fixed times")
    func oldRecordsKept() async throws {
        let broker = try await NoidaBroker()
        let topic = "old-\(UUID().uuidString.prefix(6))"
        try broker.createTopic(topic, partitions: 1)
        let producer = try Producer(configuration: ProducerConfiguration(bootstrapServers: broker.bootstrapServers))
        // A month before now: a broker's default retention (7 days) deletes such records on arrival.
        let monthAgo = Int64(Date().timeIntervalSince1970 * 1000) - 30 * 86_400_000
        let reports = await producer.sendAll(
            (0..<3).map {
                ProducerRecord(
                    topic: topic,
                    key: Array("k".utf8),
                    value: Array("old \($0)".utf8),
                    timestampMilliseconds: monthAgo
                )
            }
        )
        await producer.close()
        #expect(reports.allSatisfy { $0.isDelivered })
        // noida-db's retention runs in the background every few seconds (such records were gone within 12 s): the
        // records must still be there after that long, a window to watch rather than a condition to wait for.
        try await Task.sleep(for: .seconds(12))
        let reader = try Consumer(
            configuration: ConsumerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                groupId: "reader-\(UUID().uuidString.prefix(6))"
            ),
            subscription: .partitions([TopicPartition(topic, 0): .beginning])
        )
        let read = try await reader.receive(3, timeout: .seconds(30)).map(\.value)
        #expect(read == ["old 0", "old 1", "old 2"])
        await reader.close()
    }
}
