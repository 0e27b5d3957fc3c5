import Configuration
import Worker

extension ToolConfiguration {
    /// Reads `brokers`, `kafka`, `topics.*` and `stateDir`, as `geoworker run` does.
    ///
    /// - Throws: `WorkerError` (`configuration`) naming the key of a value that is set but unusable.
    init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            brokers: try config.text("brokers", default: defaults.brokers),
            kafkaProperties: try config.kafkaProperties(),
            topics: try config.settings(under: "topics") { config throws(WorkerError) in
                try WorkerConfiguration.Topics(config: config)
            },
            stateDir: try config.text("stateDir", default: defaults.stateDir)
        )
    }
}
