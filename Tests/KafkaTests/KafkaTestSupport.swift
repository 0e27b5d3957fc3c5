import Foundation
import Kafka
import Logging
import Synchronization
import TestSupport
import Testing

/// A fresh mock cluster with uniquely named topics, and settings that keep group tests quick.
struct TestCluster {
    let cluster: MockCluster
    static let logger: Logger = {
        var logger = Logger(label: "test.kafka")
        logger.logLevel = ProcessInfo.processInfo.environment["KAFKA_TEST_LOG"] == nil ? .critical : .debug
        return logger
    }()

    init(brokers: Int = 1) throws {
        cluster = try MockCluster(brokers: brokers, logger: Self.logger)
    }

    var bootstrapServers: String { cluster.bootstrapServers }

    /// Creates a topic named after `prefix` and unique to this run.
    func makeTopic(_ prefix: String, partitions: Int) throws -> String {
        let name = "\(prefix)-\(UUID().uuidString.prefix(8))"
        try cluster.createTopic(name, partitions: partitions)
        return name
    }

    func producer() throws -> Producer {
        try Producer(configuration: ProducerConfiguration(bootstrapServers: bootstrapServers), logger: Self.logger)
    }

    /// Group settings for tests: a member that goes away is noticed within seconds, not 45.
    func consumerConfiguration(group: String) -> ConsumerConfiguration {
        ConsumerConfiguration(
            bootstrapServers: bootstrapServers,
            groupId: group,
            sessionTimeout: .seconds(6),
            heartbeatInterval: .milliseconds(500)
        )
    }

    func consumer(
        group: String = "group-\(UUID().uuidString.prefix(8))",
        subscription: Consumer.Subscription,
        rebalanceHandler: RebalanceHandler = RebalanceHandler(),
        logger: Logger = Self.logger,
        properties: [String: String] = [:]
    ) throws -> Consumer {
        var configuration = consumerConfiguration(group: group)
        configuration.properties.merge(properties) { $1 }
        return try Consumer(
            configuration: configuration,
            subscription: subscription,
            rebalanceHandler: rebalanceHandler,
            logger: logger
        )
    }
}

/// A logger whose lines are kept in memory, for a test that says on failure what the client logged.
final class LogRecorder: Sendable {
    private let lines = Mutex<[String]>([])

    /// A logger, labelled `name`, whose lines at `level` and above this keeps.
    func logger(_ name: String, level: Logger.Level = .debug) -> Logger {
        var logger = Logger(label: name) { label in Handler(label: label, recorder: self) }
        logger.logLevel = level
        return logger
    }

    /// The last `count` lines, oldest first.
    func last(_ count: Int) -> [String] { lines.withLock { Array($0.suffix(count)) } }

    fileprivate func record(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let label: String
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let details = (metadata.merging(event.metadata ?? [:]) { $1 }).map { "\($0)=\($1)" }.sorted()
            recorder.record("\(label) \(event.level) \(event.message) \(details.joined(separator: " "))")
        }
    }
}

/// A consumed record, copied out of its batch so tests can compare plain values.
struct ReceivedRecord: Hashable, Sendable {
    let topic: String
    let partition: Int32
    let offset: Int64
    let key: String?
    let value: String?
    let headers: [KafkaHeader]

    init(_ record: ConsumerRecord) {
        topic = record.topic
        partition = record.partition
        offset = record.offset
        key = record.key.map { String(decoding: $0, as: UTF8.self) }
        value = record.value.map { String(decoding: $0, as: UTF8.self) }
        headers = record.headers
        // The apply threads' one-call reader sees the same key and value (nil stays nil, empty stays empty).
        var inPlace: (key: String?, value: String?)
        record.withKeyAndValue { key, value in
            inPlace = (
                key.map { String(decoding: $0, as: UTF8.self) }, value.map { String(decoding: $0, as: UTF8.self) }
            )
        }
        #expect(inPlace.key == key && inPlace.value == value)
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let description: String
}

extension Consumer {
    /// Polls until `count` records have arrived, failing after `timeout` (see ``WaitBudget``).
    func receive(_ count: Int, timeout: Duration = .seconds(30)) async throws -> [ReceivedRecord] {
        var received: [ReceivedRecord] = []
        var budget = WaitBudget(timeout, lookingEvery: .milliseconds(200))
        while received.count < count {
            guard budget.allowsAnotherLook() else {
                throw TimedOut(description: "received \(received.count) of \(count) records")
            }
            received += try await nextBatch(timeout: .milliseconds(200)).map(ReceivedRecord.init)
        }
        return received
    }

    /// Polls until `condition` holds, failing after `timeout` (see ``WaitBudget``).
    func poll(until condition: () -> Bool, timeout: Duration = .seconds(30), _ what: String) async throws {
        var budget = WaitBudget(timeout, lookingEvery: .milliseconds(100))
        while !condition() {
            guard budget.allowsAnotherLook() else { throw TimedOut(description: "waiting for \(what)") }
            _ = try await nextBatch(timeout: .milliseconds(100))
        }
    }
}

extension Producer {
    /// Sends `records` and expects every one to be delivered.
    func sendAll(_ records: [ProducerRecord]) async -> [DeliveryReport] {
        let reports = await send(records).reports()
        #expect(reports.allSatisfy { $0.isDelivered }, "undelivered: \(reports.filter { !$0.isDelivered })")
        return reports
    }
}
