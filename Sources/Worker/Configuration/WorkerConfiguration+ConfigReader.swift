public import Configuration
import GeoCore
import Kafka

extension WorkerConfiguration {
    /// Reads the worker's settings from `config`, scoped to the worker's keys by the caller; each key falls
    /// back to the default documented on the property.
    ///
    /// Keys (a config file nests them by their dots; environment variables are `GEOWORKER_` plus the key in
    /// upper snake case once the executable scopes the reader):
    /// `brokers`, `groupId`, `groupInstanceId`, `stateDir`, `resetState`, `mergeWaitMs`, `checkpointIntervalMs`, `storeIntervalMs`,
    /// `processingGuarantee` (`at-least-once` or `exactly-once`), `maxBatch`, `applyThreads`,
    /// `untilCaughtUp`, `coastalToleranceMeters`, `kafka` (a list of `KEY=VALUE` librdkafka properties, read
    /// as secret), `topics.*` (``Topics/init(config:)``), `tracker.*` (`TrackerConfiguration(config:)`) and
    /// `deliveryRetry.*` (``DeliveryRetry/init(config:)``), `deadLetters.*`
    /// (``DeadLetter/Limits/init(config:messageMaxBytes:)``), `changelog.*` (``ChangelogSettings/init(config:)``) and
    /// `places.enabled`, `places.index` (``Places``), `catalog.enabled`, `catalog.allowMissingTopic`,
    /// `catalog.versionRetentionSeconds` (``CatalogSettings``), `trips.*` (`TripRules(config:)`), `speed.*`
    /// (`SpeedRules(config:)`), `liveness.silentAfterSeconds` and `liveness.idlePartitionSeconds`.
    ///
    /// - Throws: ``WorkerError`` (``WorkerError/Code/configuration``) naming the key of a value that is set
    ///   but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = WorkerConfiguration()
        let kafkaProperties = try config.kafkaProperties()
        self.init(
            brokers: try config.text("brokers", default: defaults.brokers),
            topics: try config.settings(under: "topics") { config throws(WorkerError) in try Topics(config: config) },
            groupId: try config.text("groupId", default: defaults.groupId),
            groupInstanceId: try config.optionalText("groupInstanceId"),
            stateDir: try config.text("stateDir", default: defaults.stateDir),
            resetState: try config.flag("resetState", default: defaults.resetState),
            mergeWait: .milliseconds(
                try config.integer("mergeWaitMs", default: defaults.mergeWait.wholeMilliseconds, in: 0...60_000)
            ),
            idlePartitionWait: try config.settings(under: "liveness") { config throws(WorkerError) in
                // 0: never.
                let seconds = try config.integer("idlePartitionSeconds", default: 60, in: 0...86_400)
                return seconds == 0 ? nil : Duration.seconds(seconds)
            },
            checkpointInterval: .milliseconds(
                try config.integer(
                    "checkpointIntervalMs",
                    default: defaults.checkpointInterval.wholeMilliseconds,
                    in: 1...3_600_000
                )
            ),
            storeInterval: .milliseconds(
                try config.integer(
                    "storeIntervalMs",
                    default: defaults.storeInterval.wholeMilliseconds,
                    in: 0...3_600_000
                )
            ),
            processingGuarantee: try config.choice("processingGuarantee", default: defaults.processingGuarantee),
            maxBatch: try config.integer("maxBatch", default: defaults.maxBatch, in: 1...1_000_000),
            applyThreadCount: try config.integer("applyThreads", default: defaults.applyThreadCount, in: 1...256),
            untilCaughtUp: try config.flag("untilCaughtUp", default: defaults.untilCaughtUp),
            coastalTolerance: try config.number(
                "coastalToleranceMeters",
                default: defaults.coastalTolerance,
                in: 0...200_000
            ),
            tracker: try Self.tracker(config),
            deliveryRetry: try config.settings(under: "deliveryRetry") { config throws(WorkerError) in
                try DeliveryRetry(config: config)
            },
            deadLetterLimits: try config.settings(under: "deadLetters") { config throws(WorkerError) in
                try DeadLetter.Limits(
                    config: config,
                    messageMaxBytes: try Self.producerMessageMaxBytes(kafkaProperties)
                )
            },
            changelogSettings: try config.settings(under: "changelog") { config throws(WorkerError) in
                try ChangelogSettings(config: config)
            },
            places: try config.settings(under: "places") { config throws(WorkerError) in
                Places(
                    enabled: try config.flag("enabled", default: true),
                    index: try config.optionalText("index")
                )
            },
            catalog: try config.settings(under: "catalog") { config throws(WorkerError) in
                CatalogSettings(
                    enabled: try config.flag("enabled", default: false),
                    allowMissingTopic: try config.flag("allowMissingTopic", default: false),
                    versionRetention: .seconds(
                        try config.integer("versionRetentionSeconds", default: 3600, in: 0...(30 * 86_400))
                    )
                )
            },
            kafkaProperties: kafkaProperties
        )
        try processingGuarantee.check(groupInstanceId: groupInstanceId, changelogEnabled: changelogSettings.enabled)
    }

    /// The tracker's rules: `tracker.*`, with trips from `trips.*`, speeding from `speed.*` and silence from
    /// `liveness.*`.
    private static func tracker(_ config: ConfigReader) throws(WorkerError) -> TrackerConfiguration {
        var tracker = try config.settings(under: "tracker") { config throws(WorkerError) in
            try TrackerConfiguration(config: config)
        }
        tracker.trips = try config.settings(under: "trips") { config throws(WorkerError) in
            // Checked when off too: a threshold set wrong is refused before the day trips are turned on.
            let rules = try TripRules(config: config)
            return try config.flag("enabled", default: false) ? rules : nil
        }
        tracker.speeding = try config.settings(under: "speed") { config throws(WorkerError) in
            try SpeedRules(config: config)
        }
        tracker.liveness = try config.settings(under: "liveness") { config throws(WorkerError) in
            LivenessRules(
                silentAfterSeconds: try config.optionalInteger("silentAfterSeconds", in: DeviceCommand.silenceRange)
            )
        }
        return tracker
    }

    /// The producer's `message.max.bytes` among the `--kafka` properties, else librdkafka's default.
    private static func producerMessageMaxBytes(_ properties: [String: String]) throws(WorkerError) -> Int {
        guard let text = kafkaProperties(properties, for: .producer)["message.max.bytes"] else { return 1_000_000 }
        guard let value = Int(text), value > 0 else {
            throw WorkerError(.configuration, "kafka property message.max.bytes must be a positive integer")
        }
        return value
    }
}

extension WorkerConfiguration.DeliveryRetry {
    /// Reads `initialBackoffMs`, `maxBackoffMs`, `maxAttempts` and `timeoutMs` (under `deliveryRetry.` for the
    /// executable).
    ///
    /// - Throws: ``WorkerError`` when a value is out of range or the maximum is below the initial wait.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        let initial = try config.integer(
            "initialBackoffMs",
            default: defaults.initialBackoff.wholeMilliseconds,
            in: 1...240_000
        )
        let maximum = try config.integer(
            "maxBackoffMs",
            default: defaults.maxBackoff.wholeMilliseconds,
            in: 1...240_000
        )
        guard maximum >= initial else {
            throw WorkerError(
                .configuration,
                "maxBackoffMs (\(maximum)) must not be below initialBackoffMs (\(initial))"
            )
        }
        let attempts = try config.optionalInteger("maxAttempts", in: 0...1_000_000)
        let timeout = try config.optionalInteger("timeoutMs", in: 0...86_400_000)
        self.init(
            initialBackoff: .milliseconds(initial),
            maxBackoff: .milliseconds(maximum),
            maxAttempts: attempts,
            timeout: timeout.map { .milliseconds($0) }
        )
    }
}

extension DeadLetter.Limits {
    /// Reads `maxValueBytes` and `maxKeyBytes` (under `deadLetters.` for the executable); the defaults fit a
    /// producer whose `message.max.bytes` is `messageMaxBytes`.
    ///
    /// - Throws: ``WorkerError`` when a value is unusable or the two with their headroom would not fit.
    public init(config: ConfigReader, messageMaxBytes: Int) throws(WorkerError) {
        let defaults = Self.defaults(messageMaxBytes: messageMaxBytes)
        let maxKeyBytes = try config.integer("maxKeyBytes", default: defaults.maxKeyBytes, in: 1...messageMaxBytes)
        let maxValueBytes = try config.integer(
            "maxValueBytes",
            default: max(1, messageMaxBytes - maxKeyBytes - Self.headroom),
            in: 1...messageMaxBytes
        )
        guard maxValueBytes + maxKeyBytes + Self.headroom <= messageMaxBytes else {
            throw WorkerError(
                .configuration,
                "maxValueBytes (\(maxValueBytes)) and maxKeyBytes (\(maxKeyBytes)) with \(Self.headroom) bytes for "
                    + "headers must fit under the producer's message.max.bytes (\(messageMaxBytes))"
            )
        }
        self.init(maxValueBytes: maxValueBytes, maxKeyBytes: maxKeyBytes)
    }
}

extension WorkerConfiguration.ChangelogSettings {
    /// Reads `enabled` and `replicationFactor` (under `changelog.` for the executable).
    ///
    /// - Throws: ``WorkerError`` when the replication factor is neither -1 nor 1 to 32.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        let replicationFactor = try config.integer(
            "replicationFactor",
            default: defaults.replicationFactor,
            in: -1...32
        )
        guard replicationFactor != 0 else {
            throw WorkerError(.configuration, "replicationFactor must be -1 (the broker's default) or 1 to 32")
        }
        self.init(
            enabled: try config.flag("enabled", default: defaults.enabled),
            replicationFactor: replicationFactor
        )
    }
}

extension WorkerConfiguration.Topics {
    /// Reads `positions`, `commands`, `events`, `deadLetters`, `changelog`, `geofences` and `instances` (under
    /// `topics.` for the executable).
    ///
    /// - Throws: ``WorkerError`` naming a key set to an empty name.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = Self()
        self.init(
            positions: try config.text("positions", default: defaults.positions),
            commands: try config.text("commands", default: defaults.commands),
            events: try config.text("events", default: defaults.events),
            deadLetters: try config.text("deadLetters", default: defaults.deadLetters),
            changelog: try config.optionalText("changelog"),
            geofences: try config.text("geofences", default: defaults.geofences),
            instances: try config.optionalText("instances")
        )
    }
}
