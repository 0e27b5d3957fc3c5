import Foundation
import Kafka
import Testing

@Suite("Produce and consume", .timeLimit(.minutes(5)))
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

@Suite("Produce from a record buffer", .timeLimit(.minutes(5)))
struct RecordBufferTests {
    /// Sends the buffer and waits for its reports (the worker's apply threads send this way).
    static func sendAndWait(_ buffer: RecordBuffer, _ producer: Producer) -> [DeliveryReport] {
        producer.send(buffer).wait()
    }

    @Test("a buffer's last records, copied out: their keys, values and headers, none or all when asked")
    func suffix() {
        var buffer = RecordBuffer(topic: "events", headers: [KafkaHeader(name: "content-type", value: "text/plain")])
        for index in 0..<5 { buffer.append(key: "k\(index)") { $0.append(contentsOf: "value \(index)".utf8) } }
        let lastTwo = buffer.suffix(2)
        #expect(lastTwo.records.map { String(decoding: $0.key ?? [], as: UTF8.self) } == ["k3", "k4"])
        #expect(lastTwo.records.map { String(decoding: $0.value ?? [], as: UTF8.self) } == ["value 3", "value 4"])
        #expect(lastTwo.topic == "events" && lastTwo.headers == buffer.headers)
        #expect(lastTwo.byteCount == "k3value 3k4value 4".utf8.count, "only the last records' bytes")
        #expect(buffer.suffix(0).isEmpty)
        #expect(buffer.suffix(9).records.map(\.value) == buffer.records.map(\.value))
    }

    @Test("a buffer's records arrive with their keys, values and the shared headers, placed by key like records")
    func roundTrip() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("buffer", partitions: 4)
        // A local queue of 20 messages: sending 300 must wait for room rather than refuse any.
        let producer = try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                properties: ["queue.buffering.max.messages": "20"]
            ),
            logger: TestCluster.logger
        )
        let headers = [
            KafkaHeader(name: "content-type", value: "application/json"), KafkaHeader(name: "e", value: nil),
        ]
        var buffer = RecordBuffer(topic: topic, headers: headers)
        for index in 0..<300 {
            buffer.append(key: "device-\(index % 10)") { $0.append(contentsOf: "{\"n\":\(index)}".utf8) }
        }
        buffer.append(key: "device-empty") { _ in }
        #expect(buffer.count == 301)
        #expect(String(decoding: buffer.key(at: 7), as: UTF8.self) == "device-7")
        #expect(String(decoding: buffer.value(at: 7), as: UTF8.self) == #"{"n":7}"#)

        let reports = Self.sendAndWait(buffer, producer)
        #expect(reports.count == 301)
        #expect(reports.allSatisfy { $0.isDelivered && $0.topic == topic })
        // The same keys as plain records land in the same partitions.
        let plain = await producer.sendAll(
            (0..<10).map { ProducerRecord(topic: topic, key: "device-\($0)", value: "x") }
        )
        for (index, report) in reports.prefix(300).enumerated() {
            #expect(report.partition == plain[index % 10].partition)
        }

        let consumer = try cluster.consumer(subscription: .group(topics: [topic]))
        let received = try await consumer.receive(311)
        let byPlace = Dictionary(uniqueKeysWithValues: received.map { ("\($0.partition)@\($0.offset)", $0) })
        for (index, report) in reports.enumerated() {
            let got = try #require(byPlace["\(report.partition)@\(report.offset!)"])
            #expect(got.key == (index < 300 ? "device-\(index % 10)" : "device-empty"))
            #expect(got.value == (index < 300 ? "{\"n\":\(index)}" : ""), "an empty value is not a null one")
            #expect(got.headers == headers)
        }
        await consumer.close()
        await producer.close()
    }

    @Test("a closed producer reports every record of a buffer refused; an emptied buffer sends nothing")
    func refusedWhenClosed() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("buffer-closed", partitions: 1)
        let producer = try cluster.producer()
        await producer.close()
        var buffer = RecordBuffer(topic: topic)
        for index in 0..<3 { buffer.append(key: "d\(index)") { $0.append(UInt8(ascii: "x")) } }
        let reports = Self.sendAndWait(buffer, producer)
        #expect(reports.count == 3)
        #expect(reports.allSatisfy { !$0.isDelivered && $0.error?.code == .invalidState })
        buffer.removeAll()
        #expect(buffer.isEmpty)
        #expect(Self.sendAndWait(buffer, producer).isEmpty)
    }
}
