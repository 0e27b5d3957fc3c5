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

    func properties() throws -> [String: String] {
        try WorkerConfiguration.kafkaProperties(kafkaProperties)
    }
}

/// A setting of the operator's tools: the flag, else the environment variable `geoworker run` reads, else the
/// default.
func toolSetting(_ flag: String?, _ variable: String, default fallback: String) -> String {
    flag ?? ProcessInfo.processInfo.environment[variable] ?? fallback
}
