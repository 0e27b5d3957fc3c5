public import Configuration
import GeoCore
import Kafka

extension WorkerConfiguration {
    /// Reads the worker's settings; each key falls back to the default documented on the property.
    ///
    /// Keys (a config file nests them by their dots; environment variables are `GEOWORKER_` plus the key in
    /// upper snake case once the executable scopes the reader):
    /// `brokers`, `topics.positions`, `topics.commands`, `topics.events`, `topics.deadLetters`, `groupId`,
    /// `stateDir`, `mergeWaitMs`, `checkpointIntervalMs`, `maxBatch`, `applyThreads`, `untilCaughtUp`,
    /// `coastalToleranceMeters`, `kafka` (a list of `KEY=VALUE` librdkafka properties, read as secret),
    /// `tracker.maxPinsPerDevice`, `tracker.maxAccuracyMeters`, `tracker.assumedAccuracyMeters`,
    /// `tracker.countryConfirmations`.
    ///
    /// - Throws: ``WorkerError`` (``WorkerError/Code/configuration``) naming the key of a value that is set
    ///   but unusable.
    public init(config: ConfigReader) throws(WorkerError) {
        let defaults = WorkerConfiguration()
        let defaultTracker = defaults.tracker
        self.init(
            brokers: try config.text("brokers", default: defaults.brokers),
            topics: InputProcessor.Topics(
                positions: try config.text("topics.positions", default: defaults.topics.positions),
                commands: try config.text("topics.commands", default: defaults.topics.commands),
                events: try config.text("topics.events", default: defaults.topics.events),
                deadLetters: try config.text("topics.deadLetters", default: defaults.topics.deadLetters)
            ),
            groupID: try config.text("groupId", default: defaults.groupID),
            stateDirectory: try config.text("stateDir", default: defaults.stateDirectory),
            mergeWait: .milliseconds(
                try config.integer("mergeWaitMs", default: defaults.mergeWait.wholeMilliseconds, in: 0...60_000)
            ),
            checkpointInterval: .milliseconds(
                try config.integer(
                    "checkpointIntervalMs",
                    default: defaults.checkpointInterval.wholeMilliseconds,
                    in: 1...3_600_000
                )
            ),
            maximumBatch: try config.integer("maxBatch", default: defaults.maximumBatch, in: 1...1_000_000),
            applyThreads: try config.integer("applyThreads", default: defaults.applyThreads, in: 1...256),
            untilCaughtUp: try config.flag("untilCaughtUp", default: defaults.untilCaughtUp),
            coastalTolerance: try config.number(
                "coastalToleranceMeters",
                default: defaults.coastalTolerance,
                in: 0...200_000
            ),
            tracker: TrackerConfiguration(
                maximumPinsPerDevice: try config.integer(
                    "tracker.maxPinsPerDevice",
                    default: defaultTracker.maximumPinsPerDevice,
                    in: 1...10_000
                ),
                maximumAccuracy: try config.number(
                    "tracker.maxAccuracyMeters",
                    default: defaultTracker.maximumAccuracy,
                    in: 1...1_000_000
                ),
                assumedAccuracy: try config.number(
                    "tracker.assumedAccuracyMeters",
                    default: defaultTracker.assumedAccuracy,
                    in: 0...10_000
                ),
                countryConfirmations: try config.integer(
                    "tracker.countryConfirmations",
                    default: defaultTracker.countryConfirmations,
                    in: 1...100
                )
            ),
            kafkaProperties: try Self.kafkaProperties(config.stringArray(forKey: "kafka", isSecret: true) ?? [])
        )
    }

    /// Parses `KEY=VALUE` librdkafka properties (the value may itself contain `=`).
    ///
    /// - Throws: ``WorkerError`` naming the entry without a `=` or with an empty key (its value is not shown:
    ///   it may be a password).
    public static func kafkaProperties(_ entries: [String]) throws(WorkerError) -> [String: String] {
        var properties: [String: String] = [:]
        for entry in entries {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                let shown = parts.first.map { "\($0)" } ?? ""
                throw WorkerError(
                    .configuration,
                    "kafka properties are KEY=VALUE; got an entry starting \"\(shown.prefix(40))\" without one"
                )
            }
            properties[String(parts[0])] = String(parts[1])
        }
        return properties
    }
}
