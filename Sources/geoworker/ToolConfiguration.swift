import Kafka
import Worker

/// What the operator's tools (`geoworker tail`, `geoworker pins`) read: how to reach Kafka, the topics and
/// the state directory, under the same keys as `geoworker run`, so that they find what the worker uses.
struct ToolConfiguration: Sendable {
    /// Kafka bootstrap servers.
    ///
    /// Default: `localhost:9092`.
    var brokers: String
    /// Raw librdkafka properties (SASL/SSL); `consumer.`/`producer.` prefixes as for the worker.
    ///
    /// Never logged.
    var kafkaProperties: [String: String]
    /// The topics; `tail` reads `events`, `pins track` and `pins untrack` write to `commands`.
    var topics: WorkerConfiguration.Topics
    /// The worker's state directory, which `pins list` reads.
    ///
    /// Default: `./geoworker-state`.
    var stateDir: String

    init(
        brokers: String = WorkerConfiguration().brokers,
        kafkaProperties: [String: String] = [:],
        topics: WorkerConfiguration.Topics = WorkerConfiguration.Topics(),
        stateDir: String = WorkerConfiguration().stateDir
    ) {
        self.brokers = brokers
        self.kafkaProperties = kafkaProperties
        self.topics = topics
        self.stateDir = stateDir
    }

    /// A tool's producer: the brokers and the producer's `kafkaProperties`.
    var producerConfiguration: ProducerConfiguration {
        ProducerConfiguration(brokers: brokers, kafkaProperties: kafkaProperties)
    }

    /// A tool's consumer in group `groupId`: the brokers and the consumer's `kafkaProperties`.
    func consumerConfiguration(groupId: String) -> ConsumerConfiguration {
        ConsumerConfiguration(brokers: brokers, groupId: groupId, kafkaProperties: kafkaProperties)
    }
}
