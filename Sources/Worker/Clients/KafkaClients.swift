import Foundation
import Kafka
import Logging
import PartitionOffsets

/// The worker's producers for one run, built with the settings the worker tunes (each one the operator's
/// `--kafka` properties override): the producer of events and dead letters, and the changelog's producer;
/// and the settings of its consumers (the group's, which the loop polls with its rebalance hooks, and the restore's).
///
/// Under exactly-once one transactional producer sends all three (a transaction is one producer's), with a
/// transaction always open between checkpoints (``transaction(committingFor:)``).
///
/// The one holder of the producers: a rewind replaces them here (``replaceProducers()``), and whoever sends
/// asks for the current ones (``producer``, ``changelogSink``). Owned by the loop's thread.
final class KafkaClients {
    /// Replaced after a refused delivery (``replaceProducers()``): the old one's queue is purged with it.
    private(set) var producer: Producer
    /// The changelog's own producer; nil without a changelog, and under exactly-once (``producer`` sends it).
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
            if configuration.transactionalId != nil {
                try Self.startTransactions(producer, configuration, logger: logger)
            } else if configuration.changelogSettings.enabled {
                changelogProducer = try Self.makeProducer(configuration, logger: logger)
            }
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
        let sender = isTransactional ? producer : changelogProducer
        return sender.map { DeviceChangelog.Sink(topic: configuration.changelogTopic, producer: $0) }
    }

    /// Whether the producer is transactional (exactly-once).
    var isTransactional: Bool { configuration.transactionalId != nil }

    /// The open transaction, which a checkpoint commits with the offsets it covers; nil under at-least-once.
    func transaction(committingFor consumer: Consumer) -> CheckpointTransaction? {
        guard isTransactional else { return nil }
        return CheckpointTransaction(
            producer: producer,
            consumer: consumer,
            timeout: Self.transactionTimeout(configuration)
        )
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

    /// The changelog restore consumer's settings (``standaloneConsumerConfiguration(_:groupSuffix:clientId:)``).
    static func restoreConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        standaloneConsumerConfiguration(configuration, groupSuffix: "-changelog-restore", clientId: "geoworker-restore")
    }

    /// The settings of the consumer that reads the fleet's geofence catalog (``CatalogFeed``).
    static func catalogConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        standaloneConsumerConfiguration(configuration, groupSuffix: "-catalog", clientId: "geoworker-catalog")
    }

    /// The settings of the consumer that reads the group's instances topic (``GroupPresence``).
    static func instancesConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        standaloneConsumerConfiguration(configuration, groupSuffix: "-instances", clientId: "geoworker-instances")
    }

    /// The settings of the consumer that reads the events topic for the group's live stream (``GroupEventFeed``).
    static func groupEventsConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        standaloneConsumerConfiguration(configuration, groupSuffix: "-event-stream", clientId: "geoworker-event-stream")
    }

    /// The settings of the consumer that asks where input partitions end (``EndQuestions``).
    static func endsConsumerConfiguration(_ configuration: WorkerConfiguration) -> ConsumerConfiguration {
        standaloneConsumerConfiguration(configuration, groupSuffix: "-ends", clientId: "geoworker-ends")
    }

    /// A consumer of the worker's own besides the group's: the worker's brokers and consumer properties (SASL/SSL, the
    /// isolation level), a group id of its own that it never joins nor commits to (it reads partitions it names, or
    /// only asks).
    private static func standaloneConsumerConfiguration(
        _ configuration: WorkerConfiguration,
        groupSuffix: String,
        clientId: String
    ) -> ConsumerConfiguration {
        ConsumerConfiguration(
            bootstrapServers: configuration.brokers,
            groupId: configuration.groupId + groupSuffix,
            clientId: clientId,
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
    ///
    /// Under exactly-once the open transaction is aborted instead (what it sent is purged or marked aborted) and a new
    /// one begun; only a producer that can go on no more is replaced, a new one fencing it.
    func replaceProducers() throws(WorkerError) {
        if isTransactional {
            do {
                try Self.repeatingWhileRetriable("abort the transaction", logger: logger) { () throws(KafkaError) in
                    logAborted(try producer.abortTransaction(timeout: .seconds(10)))
                }
                try producer.beginTransaction()
                return
            } catch {
                logger.warning(
                    "cannot abort the transaction; starting a new transactional producer",
                    metadata: [ServiceLogKey.error: "\(error)"]
                )
            }
            producer.close(timeout: .zero)
            producer = try Self.makeProducer(configuration, logger: logger)
            try Self.startTransactions(producer, configuration, logger: logger)
            return
        }
        producer.close(timeout: .zero)
        changelogProducer?.close(timeout: .zero)
        producer = try Self.makeProducer(configuration, logger: logger)
        if changelogProducer != nil { changelogProducer = try Self.makeProducer(configuration, logger: logger) }
    }

    /// Registers the transactional producer with its coordinator (a predecessor with the same id is fenced, and the
    /// transaction it left open aborted) and begins the first transaction.
    ///
    /// - Throws: ``WorkerError`` `kafka` naming the setting when the brokers take no transactions.
    /// Brokers that cannot be reached are waited for (the coordinator asked again every 10 s), as every start waits.
    private static func startTransactions(
        _ producer: Producer,
        _ configuration: WorkerConfiguration,
        logger: Logger
    ) throws(WorkerError) {
        do {
            try repeatingWhileRetriable("start transactions", logger: logger) { () throws(KafkaError) in
                try producer.initTransactions(timeout: .seconds(10))
            }
            try producer.beginTransaction()
        } catch {
            producer.close(timeout: .zero)
            throw WorkerError(
                .kafka,
                """
                processingGuarantee exactly-once: cannot start transactions at \(configuration.brokers) (the brokers \
                must offer Kafka transactions; else choose processingGuarantee at-least-once)
                """,
                underlying: error
            )
        }
    }

    /// Calls a transactional `operation` again while the coordinator cannot be reached, saying so each time.
    private static func repeatingWhileRetriable(
        _ what: String,
        logger: Logger,
        _ operation: () throws(KafkaError) -> Void
    ) throws(KafkaError) {
        try Producer.repeatingWhileRetriable(
            onRetry: { logger.warning("cannot \(what) yet; asking again", metadata: [ServiceLogKey.error: "\($0)"]) },
            operation
        )
    }

    /// The producer's `transaction.timeout.ms` (librdkafka's default: 60 s): how long the coordinator keeps a
    /// transaction open, and the longest a record of one may wait for its delivery.
    static func transactionTimeout(_ configuration: WorkerConfiguration) -> Duration {
        let set = configuration.kafkaProperties(for: .producer)["transaction.timeout.ms"].flatMap { Int($0) }
        return .milliseconds(set ?? 60_000)
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
                    // Under exactly-once a record waits no longer than its transaction may stay open: past that the
                    // transaction is aborted, and the checkpoint with it.
                    deliveryTimeout: configuration.deliveryTimeout
                        ?? (configuration.transactionalId == nil ? .zero : transactionTimeout(configuration)),
                    transactionalId: configuration.transactionalId,
                    properties: configuration.kafkaProperties(for: .producer)
                ),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the producer", underlying: error)
        }
    }

    /// Says where an aborted transaction's records landed: a `read_committed` reader never sees them, one that does not
    /// honour aborts (or any reader on a broker that writes no transaction markers) sees them beside what is applied
    /// again.
    ///
    /// Each run of consecutive offsets is named on its own (`events[1]@520..<560, events[1]@869..<929`): the partition's
    /// next owner may have written between them, and a reader leaving out a range from the first to the last would
    /// leave out its records too.
    private func logAborted(_ offsets: [TopicPartition: OffsetRuns]) {
        let records = offsets.values.reduce(0) { $0 + $1.count }
        guard records > 0 else { return }
        let landed = offsets.sorted { $0.key < $1.key }.flatMap { partition, landed in
            landed.runs.map { "\(partition)@\($0.lowerBound)..<\($0.upperBound)" }
        }
        logger.notice(
            "aborted the open transaction: \(records) records delivered in it are not committed",
            metadata: [ServiceLogKey.abortedOffsets: "\(landed.joined(separator: ", "))"]
        )
    }

    /// Closes the producers, purging anything they could not deliver, so that no checkpoint waits for ever.
    ///
    /// Close the group's consumer first: its last revocation checkpoints what was applied, and the producers must still
    /// be there to deliver it.
    ///
    /// - Parameters:
    ///   - deliveryWait: how long each producer may take to deliver what it holds.
    ///   - giveUp: whether the stop was cancelled: the producers then stop waiting (what they hold is not covered by a
    ///     stored checkpoint, and a restart sends it again).
    ///
    /// Under exactly-once the transaction still open (begun after the last commit, or not committed) is aborted first:
    /// left open, it would hold back every read_committed reader of its partitions until this instance starts again or
    /// the broker's transaction timeout passes.
    func close(deliveryWait: Duration = .seconds(10), giveUpWhen giveUp: () -> Bool = { false }) {
        if isTransactional {
            do {
                // One call that cannot be cut short: a cancelled stop gives it a second.
                let abortWait = giveUp() ? .seconds(1) : max(deliveryWait, .seconds(1))
                logAborted(try producer.abortTransaction(timeout: abortWait))
            } catch {
                logger.warning(
                    "cannot abort the open transaction; the next start of this instance aborts it",
                    metadata: [ServiceLogKey.error: "\(error)"]
                )
            }
        }
        producer.close(timeout: deliveryWait, giveUpWhen: giveUp)
        changelogProducer?.close(timeout: deliveryWait, giveUpWhen: giveUp)
    }
}
