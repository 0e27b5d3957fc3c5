import Foundation
import Kafka
import Logging

/// The worker's two Kafka clients, built with the settings the worker tunes (each one the operator's
/// `--kafka` properties override), and the start-up check of its topics.
struct KafkaClients {
    /// Replaced after a refused delivery (``replaceProducer()``): the old one's queue is purged with it.
    private(set) var producer: Producer
    let consumer: Consumer
    private let configuration: WorkerConfiguration
    private let logger: Logger

    /// librdkafka consumer properties the worker sets unless the operator sets them (`--kafka`).
    static let consumerDefaults = [
        // Range assignment gives one member the same partition numbers of both topics.
        "partition.assignment.strategy": "range",
        // librdkafka 2.0 stops fetching for every partition once the consumer's one queue holds this many
        // messages (default 100000) and notices late that it has drained: during a catch-up the worker then
        // idled in empty polls for ~25 % of the time. The queue stays bounded by queued.max.messages.kbytes
        // (64 MB by default), which holds seconds of work.
        "queued.min.messages": "1000000",
    ]

    /// Creates the producer, then the consumer, subscribed to both input topics in the worker's group.
    ///
    /// - Throws: ``WorkerError`` `kafka`, with the ``KafkaError`` underneath, when librdkafka refuses a
    ///   property or cannot start a client.
    init(configuration: WorkerConfiguration, rebalanceHandler: RebalanceHandler, logger: Logger) throws(WorkerError) {
        self.configuration = configuration
        self.logger = logger
        producer = try Self.makeProducer(configuration, logger: logger)
        do {
            consumer = try Consumer(
                configuration: ConsumerConfiguration(
                    bootstrapServers: configuration.brokers,
                    groupID: configuration.groupID,
                    properties: Self.consumerProperties(configuration)
                ),
                subscription: .group(topics: [configuration.topics.positions, configuration.topics.commands]),
                rebalanceHandler: rebalanceHandler,
                logger: logger
            )
        } catch {
            producer.close()
            throw WorkerError(.kafka, "cannot create the consumer", underlying: error)
        }
    }

    /// The changelog restore consumer's settings: the worker's brokers and consumer properties (SASL/SSL),
    /// a group id of its own that it never joins nor commits to (it reads partitions it names).
    static func restoreConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        ConsumerConfiguration(
            bootstrapServers: configuration.brokers,
            groupID: configuration.groupID + "-changelog-restore",
            clientID: "geoworker-restore",
            properties: consumerProperties(configuration)
        )
    }

    /// The worker's consumer defaults with the operator's consumer properties over them (SASL/SSL, tuning).
    private static func consumerProperties(_ configuration: WorkerConfiguration) -> [String: String] {
        consumerDefaults.merging(configuration.kafkaProperties(for: .consumer)) { $1 }
    }

    /// Drops the producer with everything it has not delivered yet (purged at once, so nothing sent after a
    /// refused record reaches the broker later) and starts a new one.
    ///
    /// - Throws: ``WorkerError`` `kafka` when the new producer cannot start.
    mutating func replaceProducer() throws(WorkerError) {
        producer.close(timeout: .zero)
        producer = try Self.makeProducer(configuration, logger: logger)
    }

    private static func makeProducer(
        _ configuration: WorkerConfiguration,
        logger: Logger
    ) throws(WorkerError) -> Producer {
        do {
            return try Producer(
                configuration: ProducerConfiguration(
                    bootstrapServers: configuration.brokers,
                    // The loop hands over each poll's events at once, so librdkafka's 5 ms wait for a fuller
                    // batch mostly adds to every event's latency (service-bench: median send -> delivered
                    // 10 -> 7 ms, catch-up rate unchanged).
                    linger: .milliseconds(1),
                    // Deliveries wait out broker outages (0 = no timeout): progress pauses, nothing is lost.
                    deliveryTimeout: .zero,
                    properties: configuration.kafkaProperties(for: .producer)
                ),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the producer", underlying: error)
        }
    }

    /// Closing the consumer revokes its partitions, which checkpoints what was applied (the producer is still
    /// there to deliver it); closing the producer then purges anything it could not deliver, so that no
    /// checkpoint waits for ever.
    func close() {
        consumer.close()
        producer.close()
    }

    /// Refuses to run unless every topic exists and both input topics have the same partition count.
    ///
    /// - Throws: ``WorkerError`` `topics` naming the missing topic, or both counts.
    func checkTopics(_ topics: WorkerConfiguration.Topics) throws(WorkerError) {
        var counts: [String: Int] = [:]
        for topic in [topics.positions, topics.commands, topics.events, topics.deadLetters] {
            do {
                counts[topic] = try consumer.partitionCount(topic: topic)
            } catch {
                throw WorkerError(.topics, "topic \(topic)", underlying: error)
            }
        }
        guard counts[topics.positions] == counts[topics.commands] else {
            throw WorkerError(
                .topics,
                "\(topics.positions) has \(counts[topics.positions]!) partitions and \(topics.commands) has "
                    + "\(counts[topics.commands]!): the input topics must be co-partitioned (same partition count, "
                    + "both keyed by deviceId)"
            )
        }
        if configuration.changelog.enabled {
            try checkChangelog(configuration.changelogTopic, partitions: counts[topics.positions]!)
        }
    }

    /// Makes sure the changelog topic exists with the positions topic's partition count, creating it when it
    /// is missing (Admin API, compacted).
    ///
    /// - Throws: ``WorkerError`` `topics` when its partition count differs, or when it is missing and the
    ///   cluster did not create it: the message says how to create it by hand.
    private func checkChangelog(_ topic: String, partitions: Int) throws(WorkerError) {
        let existing: Int
        do {
            existing = try consumer.partitionCount(topic: topic)
        } catch  where error.code == .unknownTopicOrPartition {
            existing = try createChangelog(topic, partitions: partitions)
        } catch {
            throw WorkerError(.topics, "topic \(topic)", underlying: error)
        }
        guard existing == partitions else {
            throw WorkerError(
                .topics,
                "the changelog topic \(topic) has \(existing) partitions and \(configuration.topics.positions) has "
                    + "\(partitions): the changelog must be co-partitioned with the input (a device's record goes to "
                    + "the partition of its input partition's number)"
            )
        }
    }

    private func createChangelog(_ topic: String, partitions: Int) throws(WorkerError) -> Int {
        let replication = configuration.changelog.replicationFactor
        do {
            try producer.createTopic(
                topic,
                partitions: partitions,
                replicationFactor: replication,
                configuration: DeviceChangelog.topicConfiguration
            )
            logger.notice(
                "created the changelog topic",
                metadata: ["topic": "\(topic)", "partitions": "\(partitions)", "replicationFactor": "\(replication)"]
            )
        } catch {
            let factor = replication > 0 ? "\(replication)" : "<replicas>"
            throw WorkerError(
                .topics,
                "the changelog topic \(topic) is missing and the cluster did not create it (\(error)); create it "
                    + "with: kafka-topics.sh --bootstrap-server \(configuration.brokers) --create --topic \(topic) "
                    + "--partitions \(partitions) --replication-factor \(factor) --config cleanup.policy=compact"
            )
        }
        // A new topic's metadata reaches every broker a moment later.
        for _ in 0..<50 {
            if let count = try? consumer.partitionCount(topic: topic) { return count }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw WorkerError(.topics, "the changelog topic \(topic) was created but does not show in the metadata")
    }
}
