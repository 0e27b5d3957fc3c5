import ArgumentParser
import Configuration
import Logging
import Worker

/// How the operator's tools (`tail`, `pins`) reach Kafka: flags, else the settings `geoworker run` reads
/// (``Settings``).
struct KafkaConnection: ParsableArguments {
    @Option(help: "Kafka bootstrap servers (env GEOWORKER_BROKERS; default localhost:9092).")
    var brokers: String?

    @Option(
        name: .customLong("kafka"),
        parsing: .singleValue,
        help: ArgumentHelp("Any librdkafka property, for SASL/SSL (repeatable).", valueName: "KEY=VALUE")
    )
    var kafkaProperties: [String] = []

    /// The tool's settings: these flags and `flags`, then the environment and the config file.
    ///
    /// Sets up the tool's logging too (warnings and worse, to standard error), as every tool reads its settings first.
    ///
    /// - Throws: `CommandFailure` naming a setting that is set but unusable.
    func configuration(_ flags: [String: ConfigContent?] = [:], tool: String) async throws -> ToolConfiguration {
        Logger.Level.warning.bootstrapStandardErrorLogging()
        var all = flags
        all["brokers"] = brokers.map(ConfigContent.string)
        all["kafka"] = kafkaProperties.isEmpty ? nil : .stringArray(kafkaProperties)
        do {
            return try ToolConfiguration(config: try await Settings.reader(flags: all))
        } catch let error as WorkerError {
            throw CommandFailure("\(tool): \(error.message)")
        }
    }
}
