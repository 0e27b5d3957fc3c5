import Foundation
import Kafka
import Testing

@Suite("Produce and consume")
struct ProduceConsumeTests {
    @Test("keys, values and headers survive a round trip across partitions; reports give each place")
    func roundTrip() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("round-trip", partitions: 4)
        let producer = try cluster.producer()

        var sent: [ProducerRecord] = (0..<200).map { index in
            ProducerRecord(
                topic: topic,
                key: "device-\(index % 10)",
                value: "{\"n\":\(index)}",
                headers: [KafkaHeader(name: "n", value: "\(index)"), KafkaHeader(name: "empty", value: nil)]
            )
        }
        sent.append(ProducerRecord(topic: topic, key: nil, value: Array("no key".utf8)))
        sent.append(ProducerRecord(topic: topic, key: Array("tombstone".utf8), value: nil))
        let reports = await producer.sendAll(sent)
        #expect(reports.count == sent.count)
        #expect(reports.allSatisfy { $0.topic == topic && $0.offset != nil })

        // The same key always goes to the same partition.
        var partitionOfKey: [String: Set<Int32>] = [:]
        for (record, report) in zip(sent, reports) where record.key != nil {
            partitionOfKey[String(decoding: record.key!, as: UTF8.self), default: []].insert(report.partition)
        }
        #expect(partitionOfKey.values.allSatisfy { $0.count == 1 })
        #expect(Set(reports.map(\.partition)).count > 1, "200 records over 10 keys should use several partitions")

        let consumer = try cluster.consumer(subscription: .group(topics: [topic]))
        let received = try await consumer.receive(sent.count)
        #expect(received.count == sent.count)

        // Each record arrives once, where its delivery report said, with its key, value and headers.
        let byPlace = Dictionary(uniqueKeysWithValues: received.map { ("\($0.partition)@\($0.offset)", $0) })
        for (record, report) in zip(sent, reports) {
            let got = try #require(byPlace["\(report.partition)@\(report.offset!)"])
            #expect(got.key == record.key.map { String(decoding: $0, as: UTF8.self) })
            #expect(got.value == record.value.map { String(decoding: $0, as: UTF8.self) })
            #expect(got.headers == record.headers)
        }
        // Within a partition, offsets arrive in order.
        for partition in Set(received.map(\.partition)) {
            let offsets = received.filter { $0.partition == partition }.map(\.offset)
            #expect(offsets == offsets.sorted())
        }
        await consumer.close()
        await producer.close()
    }
}
