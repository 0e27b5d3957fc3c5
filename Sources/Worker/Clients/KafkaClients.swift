import Foundation
import Kafka
import Logging

/// The worker's producers for one run, built with the settings the worker tunes (each one the operator's
/// `--kafka` properties override): the producer of events and dead letters, and the changelog's producer;
/// and the settings of its consumers (the group's, which the loop polls with its rebalance hooks, and the restore's).
///
/// The one holder of the producers: a rewind replaces them here (``replaceProducers()``), and whoever sends
/// asks for the current ones (``producer``, ``changelogSink``). Owned by the loop's thread.
final class KafkaClients {
    /// Replaced after a refused delivery (``replaceProducers()``): the old one's queue is purged with it.
    private(set) var producer: Producer
    /// The changelog's own producer; nil without a changelog.
    ///
    /// A checkpoint sends every changed device at once: on the events' producer those records would hold up the
    /// events queued behind them on its connection, and every event's latency with them. Replaced with ``producer``.
    private(set) var changelogProducer: Producer?
    /// The input topics' partition count (both have it: ``TopicCheck``).
    let inputPartitionCount: Int
    private let configuration: WorkerConfiguration
    private let logger: Logger

    /// librdkafka consumer properties the worker sets unless the operator sets them (`--kafka`).
    static let consumerDefaults = [
        // Range assignment gives one member the same partition numbers of both topics.
        "partition.assignment.strategy": "range",
        // librdkafka 2.0 stops fetching for every partition once the consumer's one queue holds this many
        // messages (default 100000) or this many kilobytes (default 64 MB), and fetches again only when its
        // broker thread next wakes for something else (up to a second later; 2.1 added fetch.queue.backoff.ms).
        // So the queue must hold more than a second of work, or a catch-up drains it and waits (see
        // docs/performance.md). For positions of a few hundred bytes the message count is the binding limit;
        // the bytes limit only caps the queue (512 MB) when messages are larger.
        "queued.min.messages": "1000000",
        "queued.max.messages.kbytes": "524288",
    ]

    /// Creates the producers and checks the topics (``TopicCheck``).
    ///
    /// Checked before the group's consumer exists: a member that joins the group only to fail would take partitions,
    /// run the assignment hook against topics that are not there, and leave again.
    ///
    /// - Throws: ``WorkerError`` `kafka`, with the ``KafkaError`` underneath, when librdkafka refuses a
    ///   property or cannot start a client; `topics` when the topics are not as the worker needs them.
    init(configuration: WorkerConfiguration, logger: Logger) throws(WorkerError) {
        self.configuration = configuration
        self.logger = logger
        producer = try Self.makeProducer(configuration, logger: logger)
        do {
            changelogProducer =
                configuration.changelog.enabled ? try Self.makeProducer(configuration, logger: logger) : nil
        } catch {
            producer.close()
            throw error
        }
        do {
            inputPartitionCount = try TopicCheck(configuration: configuration, client: producer, logger: logger).run()
        } catch {
            producer.close()
            changelogProducer?.close()
            throw error
        }
    }

    /// Where checkpoints send changed devices: the changelog's current producer; nil without a changelog.
    var changelogSink: DeviceChangelog.Sink? {
        changelogProducer.map { DeviceChangelog.Sink(topic: configuration.changelogTopic, producer: $0) }
    }

    /// The group consumer's settings: the worker's brokers, group and consumer properties.
    static func groupConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        var properties = consumerProperties(configuration)
        if let instance = configuration.groupInstanceId { properties["group.instance.id"] = instance }
        return ConsumerConfiguration(
            bootstrapServers: configuration.brokers,
            groupId: configuration.groupId,
            properties: properties
        )
    }

    /// The changelog restore consumer's settings: the worker's brokers and consumer properties (SASL/SSL),
    /// a group id of its own that it never joins nor commits to (it reads partitions it names).
    static func restoreConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        ConsumerConfiguration(
            bootstrapServers: configuration.brokers,
            groupId: configuration.groupId + "-changelog-restore",
            clientID: "geoworker-restore",
            properties: consumerProperties(configuration)
        )
    }

    /// Where the consumer's `auto.offset.reset` starts a partition with no progress (`earliest` unless the
    /// operator set another); nil for a policy without a place (`error`).
    static func startWithoutProgress(_ configuration: WorkerConfiguration) -> StartOffset? {
        let policy =
            consumerProperties(configuration)["auto.offset.reset"]
            ?? ConsumerConfiguration.OffsetReset.earliest.rawValue
        switch policy {
        case "earliest", "smallest", "beginning": return .beginning
        case "latest", "largest", "end": return .end
        default: return nil
        }
    }

    /// The worker's consumer defaults with the operator's consumer properties over them (SASL/SSL, tuning).
    static func consumerProperties(_ configuration: WorkerConfiguration) -> [String: String] {
        consumerDefaults.merging(configuration.kafkaProperties(for: .consumer)) { $1 }
    }

    /// Drops the producers with everything they have not delivered yet (purged at once, so nothing sent after
    /// a refused record reaches the broker later) and starts new ones.
    ///
    /// - Throws: ``WorkerError`` `kafka` when a new producer cannot start.
    func replaceProducers() throws(WorkerError) {
        producer.close(timeout: .zero)
        changelogProducer?.close(timeout: .zero)
        producer = try Self.makeProducer(configuration, logger: logger)
        if changelogProducer != nil { changelogProducer = try Self.makeProducer(configuration, logger: logger) }
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
                    // batch would mostly add to every event's latency.
                    linger: .milliseconds(1),
                    // Deliveries wait out broker outages (0 = no timeout): progress pauses, nothing is lost. A
                    // catch-up run's time out, so that an outage counts towards its retry budget.
                    deliveryTimeout: configuration.deliveryTimeout ?? .zero,
                    properties: configuration.kafkaProperties(for: .producer)
                ),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the producer", underlying: error)
        }
    }

    /// Closes the producers, purging anything they could not deliver, so that no checkpoint waits for ever.
    ///
    /// Close the group's consumer first: its last revocation checkpoints what was applied, and the producers must still
    /// be there to deliver it.
    ///
    /// - Parameter deliveryWait: how long each producer may take to deliver what it holds (nothing for a cancelled
    ///   stop: what it held is not covered by a stored checkpoint, and a restart sends it again).
    func close(deliveryWait: Duration = .seconds(10)) {
        producer.close(timeout: deliveryWait)
        changelogProducer?.close(timeout: deliveryWait)
    }
}
