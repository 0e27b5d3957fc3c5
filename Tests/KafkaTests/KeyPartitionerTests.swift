import Kafka
import Testing

@Suite("Key partitioners", .timeLimit(.minutes(5)))
struct KeyPartitionerTests {
    @Test(
        "Kafka's murmur2 test vectors (the Java client's UtilsTest)",
        arguments: [
            ("21", Int32(-973_932_308)), ("foobar", -790_332_482), ("a-little-bit-long-string", -985_981_536),
            ("a-little-bit-longer-string", -1_486_304_829),
            ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58_897_971),
            ("abc", 479_470_107),
        ]
    )
    func murmur2(key: String, expected: Int32) {
        // partition = (murmur2 & 0x7fffffff) % count: with count 2^31 - 1 ... compare the positive hash instead.
        let positive = Int(UInt32(bitPattern: expected) & 0x7fff_ffff)
        for count in [1, 2, 3, 7, 64, 1000] {
            #expect(
                KeyPartitioner.java.partition(of: Array(key.utf8), partitionCount: count) == Int32(positive % count)
            )
        }
    }

    @Test("librdkafka's default partitioner puts each key where the project's partitioner says")
    func librdkafkaAgrees() async throws {
        let cluster = try TestCluster()
        let topic = try cluster.makeTopic("partitioner", partitions: 7)
        let producer = try cluster.producer()
        let keys = (0..<200).map { "device-\($0)" }
        let reports = await producer.sendAll(keys.map { ProducerRecord(topic: topic, key: $0, value: "x") })
        #expect(reports.count == keys.count)
        for (key, report) in zip(keys, reports) {
            #expect(KeyPartitioner.librdkafka.partition(of: Array(key.utf8), partitionCount: 7) == report.partition)
        }
        await producer.close()
    }
}
