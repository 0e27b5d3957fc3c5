// Kafka layer benchmark: the Swift Consumer next to raw librdkafka, on the same data in the same run.
//
//   swift run -c release kafka-bench [--messages N] [--rounds R]
//
// Preloads N messages of 120 bytes into librdkafka's in-process mock cluster (64 partitions, as the mock
// keeps only about 5 MB per partition), then reads them all back, alternating raw librdkafka
// (`rd_kafka_consume_batch_queue` in the Swift layer's call pattern, touching each payload) and the Swift `Consumer` (touching each record's
// partition, offset and payload, with its default settings), R rounds each. Prints messages/s per round and the ratio of the medians.
import BenchSupport
import CRdKafka
import Foundation
import Kafka
import Logging
import PartitionOffsets

struct Options {
    var messages = 1_000_000
    var rounds = 5
    let partitions: Int32 = 64
    let payloadSize = 120

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--messages": messages = iterator.next().flatMap(Int.init) ?? messages
            case "--rounds": rounds = iterator.next().flatMap(Int.init) ?? rounds
            default:
                FileHandle.standardError.write(Data("usage: kafka-bench [--messages N] [--rounds R]\n".utf8))
                exit(2)
            }
        }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("kafka-bench: \(message)\n".utf8))
    exit(1)
}

/// Reads every message through the Swift `Consumer`, on this thread, with its blocking batch poll.
func swiftPass(bootstrap: String, topic: String, options: Options, logger: Logger) -> Pass {
    let starts = Dictionary(
        uniqueKeysWithValues: (0..<options.partitions).map { (TopicPartition(topic, $0), StartOffset.beginning) }
    )
    let consumer: Consumer
    do {
        consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bootstrap, groupId: "bench-swift"),
            subscription: .partitions(starts),
            logger: logger
        )
    } catch {
        fail("swift consumer: \(error)")
    }
    var count = 0
    var bytes = 0
    var offsets = 0
    var start: ContinuousClock.Instant?
    while count < options.messages {
        let batch: ConsumerBatch
        do {
            batch = try consumer.poll(maxMessages: 10_000, timeout: .seconds(1))
        } catch {
            fail("poll: \(error)")
        }
        if !batch.isEmpty && start == nil { start = .now }
        for record in batch {
            count += 1
            offsets &+= Int(record.offset) &+ Int(record.partition)
            bytes += record.withValue { $0?.count ?? 0 }
        }
    }
    let elapsed = ContinuousClock.now - start!
    consumer.close()
    precondition(offsets != 0)
    return Pass(messages: count, seconds: elapsed.seconds, payloadBytes: bytes)
}

func preload(cluster: MockCluster, topic: String, options: Options, logger: Logger) {
    let producer: Producer
    do {
        producer = try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                linger: .milliseconds(20),
                properties: ["queue.buffering.max.messages": "1000000", "batch.num.messages": "10000"]
            ),
            logger: logger
        )
    } catch {
        fail("producer: \(error)")
    }
    // Device-position-sized JSON-ish payloads, 120 bytes each.
    let template = Array(
        #"{"deviceId":"truck-00000","lat":50.846600,"lon":4.352800,"timestamp":1795000000000,"accuracy":12.0,"speed":13.4}"#
            .utf8
    )
    let payload =
        Array(template.prefix(options.payloadSize))
        + [UInt8](repeating: 32, count: max(0, options.payloadSize - template.count))
    let start = ContinuousClock.now
    var batches: [DeliveryBatch] = []
    let chunk = 100_000
    for first in stride(from: 0, to: options.messages, by: chunk) {
        let records = (first..<min(first + chunk, options.messages)).map {
            ProducerRecord(topic: topic, partition: Int32($0 % Int(options.partitions)), value: payload)
        }
        batches.append(producer.send(records))
    }
    let failures = batches.flatMap { $0.wait() }.filter { !$0.isDelivered }
    guard failures.isEmpty else { fail("\(failures.count) messages not delivered, first: \(failures[0])") }
    let elapsed = (ContinuousClock.now - start).seconds
    producer.close()
    print(
        String(
            format: "preload: %d messages of %d bytes into %d partitions in %.2f s (%.0f messages/s produced)",
            options.messages,
            options.payloadSize,
            options.partitions,
            elapsed,
            Double(options.messages) / elapsed
        )
    )
}

let options = Options(arguments: CommandLine.arguments)
var logger = Logger(label: "kafka-bench")
logger.logLevel = .error
let cluster: MockCluster
do {
    cluster = try MockCluster(brokers: 1, logger: logger)
    try cluster.createTopic("bench", partitions: Int(options.partitions))
} catch {
    fail("mock cluster: \(error)")
}
print(
    "kafka-bench: librdkafka \(String(cString: rd_kafka_version_str())), \(ProcessInfo.processInfo.activeProcessorCount) cores"
)
preload(cluster: cluster, topic: "bench", options: options, logger: logger)

var raw: [Double] = []
var rawFill: [Double] = []
var swift: [Double] = []
for round in 1...options.rounds {
    let rawResult = rawPass(
        bootstrap: cluster.bootstrapServers,
        topic: "bench",
        partitions: options.partitions,
        messages: options.messages,
        pattern: .drainReady
    )
    let swiftResult = swiftPass(bootstrap: cluster.bootstrapServers, topic: "bench", options: options, logger: logger)
    let fillResult = rawPass(
        bootstrap: cluster.bootstrapServers,
        topic: "bench",
        partitions: options.partitions,
        messages: options.messages,
        pattern: .fillBatch
    )
    guard rawResult.payloadBytes == swiftResult.payloadBytes, rawResult.messages == swiftResult.messages else {
        fail("raw and Swift read different data: \(rawResult) vs \(swiftResult)")
    }
    raw.append(rawResult.rate)
    swift.append(swiftResult.rate)
    rawFill.append(fillResult.rate)
    print(
        String(
            format: "round %d: raw librdkafka %.0f/s, Swift Consumer %.0f/s, raw fill-the-batch pattern %.0f/s",
            round,
            rawResult.rate,
            swiftResult.rate,
            fillResult.rate
        )
    )
}
print(
    String(
        format: "median messages/s: raw librdkafka %.0f, Swift Consumer %.0f, ratio %.2f (target 0.80 or more)",
        median(raw),
        median(swift),
        median(swift) / median(raw)
    )
)
print(String(format: "for reference: raw librdkafka waiting to fill each 10k batch %.0f messages/s", median(rawFill)))
