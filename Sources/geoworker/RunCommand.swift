import AddressLookups
import Addresses
import ArgumentParser
import AsyncHTTPClient
import Configuration
import Kafka
import Logging
import Metrics
import Operations
import Prometheus
import ServiceLifecycle
import Worker

/// `geoworker run`: the service.
///
/// Every setting comes from, in this order: the flag, the environment variable (`GEOWORKER_` + the setting's
/// key in upper snake case), the JSON config file (`--config`), the default. docs/configuration.md lists them all.
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

    @Option(help: "JSON config file (keys as in docs/configuration.md; env GEOWORKER_CONFIG).")
    var config: String?

    @Option(
        help:
            "Street addresses on the device card from this reverse geocoder's base URL (Nominatim's /reverse; env GEOWORKER_ADDRESS_PROVIDER; default off). Its other settings: --set address.KEY=VALUE (docs/addresses.md)."
    )
    var addressProvider: String?

    @Option(
        help:
            "The User-Agent of address requests: your application and a contact, which the public Nominatim requires (env GEOWORKER_ADDRESS_USER_AGENT)."
    )
    var addressUserAgent: String?

    @Flag(
        help:
            "Ask a fix's address when it enters a new bucket, before anyone looks (env GEOWORKER_ADDRESS_PREFETCH; default off; never against the public Nominatim)."
    )
    var addressPrefetch = false

    @Option(
        name: .customLong("set"),
        parsing: .singleValue,
        help: ArgumentHelp(
            "Any setting by its key, above the environment and the file (repeatable): every key of docs/configuration.md, such as address.provider=http://nominatim:8088, address.prefetch=true, tracker.maxPinsPerDevice=50, deliveryRetry.maxAttempts=10.",
            valueName: "KEY=VALUE"
        )
    )
    var assignments: [String] = []

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

    @Option(
        help:
            "Compacted topic of device states, co-partitioned with positions; created when missing (env GEOWORKER_TOPICS_CHANGELOG; default <group-id>-device-state-changelog)."
    )
    var changelogTopic: String?

    @Option(
        help:
            "Replication factor of a changelog topic the worker creates; -1 takes the broker's default (env GEOWORKER_CHANGELOG_REPLICATION_FACTOR; default -1)."
    )
    var changelogReplicationFactor: Int?

    @Flag(
        help:
            "Keep no changelog: each instance knows only the devices it processed; for a single instance only (env GEOWORKER_CHANGELOG_ENABLED=false)."
    )
    var noChangelog = false

    @Flag(
        help:
            "Read the fleet's geofence catalog, which devices watch by tag (subscribe commands, tracker.catalogTags) (env GEOWORKER_CATALOG_ENABLED; default off)."
    )
    var catalog = false

    @Option(
        help:
            "The catalog's compacted topic, one record per geofence keyed by its id (env GEOWORKER_TOPICS_GEOFENCES; default geofences)."
    )
    var geofencesTopic: String?

    @Option(help: "Consumer group id (env GEOWORKER_GROUP_ID; default geoworker).")
    var groupId: String?

    @Option(
        help:
            "Static group membership: a name unique to this instance and kept across its restarts, so that a restart within the session timeout keeps its partitions (env GEOWORKER_GROUP_INSTANCE_ID; default none)."
    )
    var groupInstanceId: String?

    @Option(
        help:
            "The places index for region and time-zone events (env GEOWORKER_PLACES_INDEX; default: places.idx beside the executable, .build-places/ of a source checkout, /usr/share/geoworker/)."
    )
    var placesIndex: String?

    @Flag(help: "Look up no places: no region or time-zone events (env GEOWORKER_PLACES_ENABLED=false).")
    var noPlaces = false

    @Option(help: "Directory of the SQLite state (env GEOWORKER_STATE_DIR; default ./geoworker-state).")
    var stateDir: String?

    @Flag(
        help:
            "Move the state directory's store aside (kept, named with the time) and start with no devices: for a damaged store with no changelog to rebuild it from. Use once."
    )
    var resetState = false

    @Option(
        help:
            "Port of /metrics, /health, /ready and (with --http-devices) the device endpoints and map; 0 takes a free port (env GEOWORKER_HTTP_PORT; default 8080)."
    )
    var httpPort: Int?

    @Option(
        help:
            "Address the HTTP port listens on (env GEOWORKER_HTTP_HOST; default 0.0.0.0, every interface, as a container needs)."
    )
    var httpHost: String?

    @Flag(
        help:
            "Serve the device endpoints and the live map on the HTTP port (env GEOWORKER_HTTP_DEVICES; default off: device positions are personal data). Beyond 127.0.0.1 they need GEOWORKER_HTTP_TOKEN (a bearer token) or --http-allow-open-devices."
    )
    var httpDevices = false

    @Flag(
        help:
            "Serve the device endpoints without a token on an address other hosts reach, on purpose (env GEOWORKER_HTTP_ALLOW_OPEN_DEVICES; default off: such a start is refused)."
    )
    var httpAllowOpenDevices = false

    @Option(
        help: ArgumentHelp(
            "Where the group's other instances reach this one's HTTP port (http://host:port; without a port, the port it listens on): the instance tells its group, and its device card, nearby answer and map answer for the whole group (env GEOWORKER_HTTP_ADVERTISED_ADDRESS; default none).",
            valueName: "URL"
        )
    )
    var httpAdvertisedAddress: String?

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
            "Threads that apply messages; devices are split among them by a hash of their id (env GEOWORKER_APPLY_THREADS; default: processors, at most 8)."
    )
    var applyThreads: Int?

    @Option(help: "Milliseconds between checkpoints (env GEOWORKER_CHECKPOINT_INTERVAL_MS; default 1000).")
    var checkpointIntervalMs: Int?

    @Option(
        help:
            "Milliseconds the local store may lag the changelog; 0 writes it at every checkpoint (env GEOWORKER_STORE_INTERVAL_MS; default 10000)."
    )
    var storeIntervalMs: Int?

    @Option(
        help:
            "at-least-once, or exactly-once: each checkpoint one Kafka transaction, read with isolation.level=read_committed; needs --group-instance-id (env GEOWORKER_PROCESSING_GUARANTEE; default at-least-once)."
    )
    var processingGuarantee: String?

    @Option(
        help: "Log level: trace, debug, info, notice, warning, error, critical (env GEOWORKER_LOG_LEVEL; default info)."
    )
    var logLevel: String?

    @Option(help: "Milliseconds a graceful stop may take (env GEOWORKER_SHUTDOWN_TIMEOUT_MS; default 30000).")
    var shutdownTimeoutMs: Int?

    func run() async throws {
        let configuration: RunConfiguration
        do {
            configuration = try RunConfiguration(config: try await settingsReader())
            try CrashPoint.armFromEnvironment()
        } catch let error as WorkerError {
            throw CommandFailure("geoworker run: \(error.message)")
        }
        if let problem = ListenCheck.problem(host: configuration.http.host, port: configuration.http.port) {
            throw CommandFailure("geoworker run: \(problem)")
        }
        configuration.logLevel.bootstrapStandardErrorLogging()
        let logger = Logger(label: "geoworker")
        do {
            try await runService(configuration, logger: logger)
        } catch let error as WorkerError {
            logger.critical("\(error)", metadata: [ServiceLogKey.code: "\(error.code)"])
            throw Self.exitCode(of: error)
        }
    }

    /// The exit status of a run that failed (the README's table): 75 (`EX_TEMPFAIL`) when the worker gave up on
    /// Kafka after its retry budget, so that a job scheduler may try again later; 2 when a stop gave up at its
    /// deadline, so that a supervisor can tell it from a clean stop; 1 for anything else.
    static func exitCode(of error: WorkerError) -> ExitCode {
        switch error.code {
        case .unavailable: ExitCode(75)
        case .shutdown: ExitCode(2)
        default: .failure
        }
    }

    private func runService(_ configuration: RunConfiguration, logger: Logger) async throws {
        logger.info("memory allocator", metadata: [ServiceLogKey.allocator: "\(MemoryAllocator.name)"])
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(OperationsServer.metricsFactory(registry: registry))
        let addresses = try Self.addressService(configuration, logger: logger)
        let worker = try Worker(
            configuration: configuration.worker,
            logger: logger,
            feed: EventFeed(capacity: configuration.http.streamBuffer, recent: configuration.http.recentEvents),
            addressPrefetch: configuration.address.prefetch ? addresses : nil
        )
        // With an advertised address the instance joins its group's directory (where it answers, what it holds), and
        // its event stream shows the whole group's events, read from the events topic.
        let group = configuration.http.advertisedAddress.map { address in
            (
                presence: GroupPresence(
                    configuration: configuration.worker,
                    advertisedAddress: address,
                    assignment: worker.assignment,
                    logger: logger
                ),
                events: GroupEventFeed(
                    configuration: configuration.worker,
                    feed: EventFeed(capacity: configuration.http.streamBuffer, recent: configuration.http.recentEvents),
                    logger: logger
                )
            )
        }
        let http = OperationsServer.application(
            configuration: configuration.http,
            health: worker.health,
            registry: registry,
            devices: DeviceEndpoints.Sources(
                queries: worker.queries,
                feed: worker.feed,
                addresses: addresses.map(EndpointAddresses.init(service:)),
                group: group?.presence.directory,
                groupFeed: group?.events.feed
            ),
            logger: logger,
            onListening: { port in group?.presence.listening(on: port) }
        )
        try await WorkerProcess.run(
            worker: worker,
            http: http,
            addresses: addresses,
            group: group,
            shutdownTimeout: configuration.shutdownTimeout,
            logger: logger
        )
        if worker.stoppedBeforeCaughtUp {
            logger.warning("stopped before catching up: what was applied is stored, the rest is not applied yet")
            throw ExitCode(3)
        }
    }

    /// The street addresses' service, when `address.provider` is set: its cache beside the state
    /// (`addresses.sqlite`), its requests through the process's shared HTTP client.
    private static func addressService(_ configuration: RunConfiguration, logger: Logger) throws -> AddressService? {
        guard configuration.address.isEnabled else { return nil }
        let cache: AddressCache
        do {
            cache = try AddressCache(
                directory: configuration.worker.stateDir,
                capacity: configuration.address.cacheCapacity
            )
        } catch {
            throw WorkerError(.configuration, "address: \(error)")
        }
        logger.info(
            "street addresses from \(configuration.address.provider ?? "")",
            metadata: ["bucketMeters": "\(configuration.address.bucketMeters)"]
        )
        return AddressService(configuration: configuration.address, cache: cache, client: .shared, logger: logger)
    }

    /// The settings: flags first, then `GEOWORKER_*` environment variables, then the config file.
    private func settingsReader() async throws -> ConfigReader {
        try await Settings.reader(
            flags: [
                "brokers": brokers.map(ConfigContent.string),
                "topics.positions": positionsTopic.map(ConfigContent.string),
                "topics.commands": commandsTopic.map(ConfigContent.string),
                "topics.events": eventsTopic.map(ConfigContent.string),
                "topics.deadLetters": deadLetterTopic.map(ConfigContent.string),
                "topics.changelog": changelogTopic.map(ConfigContent.string),
                "changelog.enabled": noChangelog ? .bool(false) : nil,
                "catalog.enabled": catalog ? .bool(true) : nil,
                "topics.geofences": geofencesTopic.map(ConfigContent.string),
                "changelog.replicationFactor": changelogReplicationFactor.map(ConfigContent.int),
                "groupId": groupId.map(ConfigContent.string),
                "groupInstanceId": groupInstanceId.map(ConfigContent.string),
                "stateDir": stateDir.map(ConfigContent.string),
                "places.index": placesIndex.map(ConfigContent.string),
                "places.enabled": noPlaces ? .bool(false) : nil,
                "resetState": resetState ? .bool(true) : nil,
                "http.port": httpPort.map(ConfigContent.int),
                "http.devices": httpDevices ? .bool(true) : nil,
                "http.host": httpHost.map(ConfigContent.string),
                "http.allowOpenDevices": httpAllowOpenDevices ? .bool(true) : nil,
                "http.advertisedAddress": httpAdvertisedAddress.map(ConfigContent.string),
                "address.provider": addressProvider.map(ConfigContent.string),
                "address.userAgent": addressUserAgent.map(ConfigContent.string),
                "address.prefetch": addressPrefetch ? .bool(true) : nil,
                "kafka": kafkaProperties.isEmpty ? nil : .stringArray(kafkaProperties),
                "untilCaughtUp": untilCaughtUp ? .bool(true) : nil,
                "mergeWaitMs": mergeWaitMs.map(ConfigContent.int),
                "checkpointIntervalMs": checkpointIntervalMs.map(ConfigContent.int),
                "storeIntervalMs": storeIntervalMs.map(ConfigContent.int),
                "processingGuarantee": processingGuarantee.map(ConfigContent.string),
                "applyThreads": applyThreads.map(ConfigContent.int),
                "logLevel": logLevel.map(ConfigContent.string),
                "shutdownTimeoutMs": shutdownTimeoutMs.map(ConfigContent.int),
            ],
            configFile: config,
            assignments: assignments
        )
    }
}
