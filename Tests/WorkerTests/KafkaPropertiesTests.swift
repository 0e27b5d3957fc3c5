import Testing
import Worker

@Suite("Kafka properties for each client")
struct KafkaPropertiesTests {
    @Test("unprefixed properties go to both clients; a client's prefix sends one to it alone and wins")
    func split() throws {
        let configuration = WorkerConfiguration(
            kafkaProperties: try WorkerConfiguration.kafkaProperties([
                "security.protocol=SASL_SSL",
                "consumer.fetch.wait.max.ms=5",
                "producer.linger.ms=20",
                "producer.security.protocol=SSL",
                "sasl.password=a=b",
            ])
        )
        #expect(
            configuration.kafkaProperties(for: .consumer) == [
                "security.protocol": "SASL_SSL", "fetch.wait.max.ms": "5", "sasl.password": "a=b",
            ]
        )
        #expect(
            configuration.kafkaProperties(for: .producer) == [
                "security.protocol": "SSL", "linger.ms": "20", "sasl.password": "a=b",
            ]
        )
    }
}
