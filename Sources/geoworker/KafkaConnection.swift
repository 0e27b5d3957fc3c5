import ArgumentParser
import Foundation
import Worker

/// How the operator's tools (`tail`, `pins`) reach Kafka: flags, else the variables `geoworker run` reads.
struct KafkaConnection: ParsableArguments {
    @Option(help: "Kafka bootstrap servers (env GEOWORKER_BROKERS; default localhost:9092).")
    var brokers: String?

    @Option(
        name: .customLong("kafka"),
        parsing: .singleValue,
        help: ArgumentHelp("Any librdkafka property, for SASL/SSL (repeatable).", valueName: "KEY=VALUE")
    )
    var kafkaProperties: [String] = []

    var bootstrapServers: String {
        toolSetting(brokers, "GEOWORKER_BROKERS", default: "localhost:9092")
    }

    /// The `--kafka` properties for `client`, with the `consumer.`/`producer.` prefixes `geoworker run` takes.
    func properties(for client: WorkerConfiguration.KafkaClient) throws -> [String: String] {
        WorkerConfiguration.kafkaProperties(try WorkerConfiguration.kafkaProperties(kafkaProperties), for: client)
    }
}

/// A setting of the operator's tools: the flag, else the environment variable `geoworker run` reads, else the
/// default.
func toolSetting(_ flag: String?, _ variable: String, default fallback: String) -> String {
    flag ?? ProcessInfo.processInfo.environment[variable] ?? fallback
}
