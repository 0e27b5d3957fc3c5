import Addresses
import Configuration
import Kafka
import Logging
import Operations
import Worker

extension RunConfiguration {
    /// Reads `logLevel` (trace, debug, info, notice, warning, error, critical), `shutdownTimeoutMs`, the
    /// worker's keys (`WorkerConfiguration(config:)`), the operations port's under `http.` and the street addresses'
    /// under `address.`.
    ///
    /// - Throws: `WorkerError` (`configuration`) naming the key of a value that is set but unusable.
    init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        let levelName = try config.text("logLevel", default: defaults.logLevel.rawValue)
        guard let logLevel = Logger.Level(rawValue: levelName) else {
            throw WorkerError(
                .configuration,
                "logLevel must be one of trace, debug, info, notice, warning, error, critical (got \"\(levelName)\")"
            )
        }
        self.init(
            logLevel: logLevel,
            shutdownTimeout: .milliseconds(
                try config.integer(
                    "shutdownTimeoutMs",
                    default: defaults.shutdownTimeout.wholeMilliseconds,
                    in: 100...3_600_000
                )
            ),
            worker: try WorkerConfiguration(config: config),
            http: try config.settings(under: "http") { config throws(WorkerError) in
                try OperationsServer.Configuration(config: config)
            },
            address: try config.settings(under: "address") { config throws(WorkerError) in
                try AddressConfiguration(config: config)
            }
        )
    }
}
