public import ArgumentParser
import Configuration
import Foundation
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import SystemPackage
import Worker

/// `geoworker run`: the service.
///
/// Every setting comes from, in this order: the flag, the environment variable (`GEOWORKER_` + the setting's
/// key in upper snake case), the JSON config file (`--config`), the default. The README lists them all.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Consume positions and commands from Kafka, publish geofence, country and language events.",
        discussion: """
            The positions and commands topics must exist, be keyed by deviceId and have the same number of \
            partitions. Each setting is read from its flag, else from its environment variable, else from \
            the config file, else its default. SIGTERM or SIGINT finishes the batch in flight, persists, \
            commits, leaves the group and exits 0.
            """
    )

    @Option(help: "JSON config file (keys as in the README; env GEOWORKER_CONFIG).")
    var config: String?

    @Option(help: "Kafka bootstrap servers, host:port[,host:port...] (env GEOWORKER_BROKERS; default localhost:9092).")
    var brokers: String?

    @Option(help: "Topic of device positions (env GEOWORKER_TOPICS_POSITIONS; default positions).")
    var positionsTopic: String?

    @Option(
        help:
            "Topic of track/untrack commands, co-partitioned with positions (env GEOWORKER_TOPICS_COMMANDS; default commands)."
    )
    var commandsTopic: String?

    @Option(help: "Topic the events are published to (env GEOWORKER_TOPICS_EVENTS; default events).")
    var eventsTopic: String?

    @Option(
        help:
            "Topic for messages that cannot be decoded or carried out (env GEOWORKER_TOPICS_DEAD_LETTERS; default geoworker-dead-letters)."
    )
    var deadLetterTopic: String?

    @Option(help: "Consumer group id (env GEOWORKER_GROUP_ID; default geoworker).")
    var groupId: String?

    @Option(help: "Directory of the SQLite state (env GEOWORKER_STATE_DIR; default ./geoworker-state).")
    var stateDir: String?

    @Option(help: "Port of /metrics, /health and /ready; 0 takes a free port (env GEOWORKER_HTTP_PORT; default 8080).")
    var httpPort: Int?

    @Option(
        name: .customLong("kafka"),
        parsing: .singleValue,
        help: ArgumentHelp(
            "Any librdkafka property, for SASL/SSL and tuning; prefix consumer. or producer. for one client only; "
                + "repeatable (env GEOWORKER_KAFKA, comma-separated).",
            valueName: "KEY=VALUE"
        )
    )
    var kafkaProperties: [String] = []

    @Flag(help: "Exit once every assigned partition has been processed to its end (env GEOWORKER_UNTIL_CAUGHT_UP).")
    var untilCaughtUp = false

    @Option(help: "Milliseconds a partition pair waits for an empty side (env GEOWORKER_MERGE_WAIT_MS; default 200).")
    var mergeWaitMs: Int?

    @Option(
        help:
            "Threads that apply messages, each owning every N-th partition pair (env GEOWORKER_APPLY_THREADS; default: processors, at most 8)."
    )
    var applyThreads: Int?

    @Option(help: "Milliseconds between checkpoints (env GEOWORKER_CHECKPOINT_INTERVAL_MS; default 1000).")
    var checkpointIntervalMs: Int?

    @Option(
        help: "Log level: trace, debug, info, notice, warning, error, critical (env GEOWORKER_LOG_LEVEL; default info)."
    )
    var logLevel: String?

    func run() async throws {
        let settings = try await settingsReader()
        let level = Logger.Level(rawValue: settings.string(forKey: "logLevel", default: "info"))
        guard let level else {
            throw ValidationError("logLevel must be one of trace, debug, info, notice, warning, error, critical.")
        }
        level.bootstrapStandardErrorLogging()
        let logger = Logger(label: "geoworker")
        do {
            try await runService(settings: settings, logger: logger)
        } catch let error as WorkerError {
            logger.critical("\(error)", metadata: ["code": "\(error.code)"])
            throw ExitCode.failure
        }
    }

    private func runService(settings: ConfigReader, logger: Logger) async throws {
        let workerConfiguration = try WorkerConfiguration(config: settings)
        let httpConfiguration = try OperationsServer.Configuration(config: settings)
        let shutdownTimeout = try settings.integer("shutdownTimeoutMs", default: 30_000, in: 100...3_600_000)

        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(OperationsServer.metricsFactory(registry: registry))
        let worker = try Worker(configuration: workerConfiguration, logger: logger)
        let http = OperationsServer.application(
            configuration: httpConfiguration,
            health: worker.health,
            registry: registry,
            logger: logger
        )
        // Graceful shutdown goes in reverse order: the worker stops first, the endpoints last.
        var group = ServiceGroupConfiguration(
            services: [
                .init(service: http),
                .init(
                    service: WorkerService(worker: worker),
                    successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup,
                    serviceName: "worker"
                ),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // A stop that cannot finish (deliveries waiting out a broker outage) gives up after this; nothing
        // unpersisted is lost, the next start replays it.
        group.maximumGracefulShutdownDuration = .milliseconds(shutdownTimeout)
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
    }

    /// The settings: flags first, then `GEOWORKER_*` environment variables, then the config file.
    private func settingsReader() async throws -> ConfigReader {
        var flags: [AbsoluteConfigKey: ConfigValue] = [:]
        func set(_ key: String, _ content: ConfigContent?, secret: Bool = false) {
            if let content {
                flags[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(
                    content,
                    isSecret: secret
                )
            }
        }
        set("brokers", brokers.map(ConfigContent.string))
        set("topics.positions", positionsTopic.map(ConfigContent.string))
        set("topics.commands", commandsTopic.map(ConfigContent.string))
        set("topics.events", eventsTopic.map(ConfigContent.string))
        set("topics.deadLetters", deadLetterTopic.map(ConfigContent.string))
        set("groupId", groupId.map(ConfigContent.string))
        set("stateDir", stateDir.map(ConfigContent.string))
        set("http.port", httpPort.map(ConfigContent.int))
        set("kafka", kafkaProperties.isEmpty ? nil : .stringArray(kafkaProperties), secret: true)
        set("untilCaughtUp", untilCaughtUp ? .bool(true) : nil)
        set("mergeWaitMs", mergeWaitMs.map(ConfigContent.int))
        set("checkpointIntervalMs", checkpointIntervalMs.map(ConfigContent.int))
        set("applyThreads", applyThreads.map(ConfigContent.int))
        set("logLevel", logLevel.map(ConfigContent.string))

        let environment = EnvironmentVariablesProvider(secretsSpecifier: .specific(["GEOWORKER_KAFKA"]))
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: flags),
            environment.prefixKeys(with: "geoworker"),
        ]
        if let file = config ?? ProcessInfo.processInfo.environment["GEOWORKER_CONFIG"] {
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
            } catch {
                throw ValidationError("config file \(file): \(error)")
            }
        }
        return ConfigReader(providers: providers)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {
    /// Logs of this level and above go to standard error (the commands' one logging set-up).
    func bootstrapStandardErrorLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = self
            return handler
        }
    }
}
