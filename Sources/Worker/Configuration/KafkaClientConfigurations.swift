public import Kafka

extension ProducerConfiguration {
    /// A producer for `brokers` with the properties of `kafkaProperties` that go to producers (shared and
    /// `producer.`-prefixed ones, as the worker's `kafka` setting takes them), for tools beside the worker.
    public init(brokers: String, kafkaProperties: [String: String]) {
        self.init(
            bootstrapServers: brokers,
            properties: WorkerConfiguration.kafkaProperties(kafkaProperties, for: .producer)
        )
    }
}

extension ConsumerConfiguration {
    /// A consumer in `groupId` for `brokers` with the properties of `kafkaProperties` that go to consumers (shared and
    /// `consumer.`-prefixed ones, as the worker's `kafka` setting takes them), for tools beside the worker.
    public init(brokers: String, groupId: String, kafkaProperties: [String: String]) {
        self.init(
            bootstrapServers: brokers,
            groupId: groupId,
            properties: WorkerConfiguration.kafkaProperties(kafkaProperties, for: .consumer)
        )
    }
}
