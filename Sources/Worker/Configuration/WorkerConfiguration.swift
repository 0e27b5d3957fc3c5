public import Countries
import Foundation
public import GeoCore
import Kafka
import Logging

/// Settings of a ``Worker``.
public struct WorkerConfiguration: Sendable {
    /// The topics the worker reads and writes.
    public struct Topics: Hashable, Sendable {
        /// Device positions, keyed by device id.
        ///
        /// Default: `positions`.
        public var positions: String
        /// Track and untrack commands, keyed by device id, co-partitioned with positions.
        ///
        /// Default: `commands`.
        public var commands: String
        /// Where the events go (CloudEvents, keyed by device id).
        ///
        /// Default: `events`.
        public var events: String
        /// Where messages that cannot be decoded or carried out go.
        ///
        /// Default: `geoworker-dead-letters`.
        public var deadLetters: String
        /// The device-state changelog (``DeviceChangelog``); nil for the group's default,
        /// `<groupId>-device-state-changelog` (see ``WorkerConfiguration/changelogTopic``).
        public var changelog: String?
        /// The fleet's geofence catalog, a compacted topic keyed by geofence id (any partition count), read whole by
        /// every instance when ``CatalogSettings/enabled``.
        ///
        /// Default: `geofences`.
        public var geofences: String
        /// Where the group's instances say where their operations ports answer and which partitions each holds
        /// (``GroupPresence``, with `http.advertisedAddress`); nil for the group's default, `<groupId>-instances` (see
        /// ``WorkerConfiguration/instancesTopic``).
        public var instances: String?

        public init(
            positions: String = "positions",
            commands: String = "commands",
            events: String = "events",
            deadLetters: String = "geoworker-dead-letters",
            changelog: String? = nil,
            geofences: String = "geofences",
            instances: String? = nil
        ) {
            self.positions = positions
            self.commands = commands
            self.events = events
            self.deadLetters = deadLetters
            self.changelog = changelog
            self.geofences = geofences
            self.instances = instances
        }
    }

    /// Initial Kafka brokers, `host:port[,host:port…]`.
    ///
    /// Default: `localhost:9092`.
    public var brokers: String
    /// Input and output topics; see ``Topics`` for their defaults.
    public var topics: Topics
    /// The consumer group both input topics are read in.
    ///
    /// Default: `geoworker`.
    public var groupId: String
    /// Static membership (librdkafka's `group.instance.id`): a name unique to this instance and kept across its
    /// restarts, so that the group keeps its partitions for it while it restarts within the session timeout instead
    /// of moving them to the others and back.
    ///
    /// Default: none (dynamic membership).
    public var groupInstanceId: String?
    /// Where the SQLite state (devices, pins, input offsets) lives.
    ///
    /// Default: `./geoworker-state`.
    public var stateDir: String
    /// Start with no devices: the state directory's store is moved aside (kept, named with the time) before the
    /// worker opens a new one.
    ///
    /// For a damaged store with no changelog to rebuild from, knowingly; use it once.
    ///
    /// Default: false.
    public var resetState: Bool
    /// How long a partition pair's next record waits for a side with nothing buffered (that side caught up as far as
    /// anyone knows, or its end not yet confirmed by the brokers) before going on without it; the records of each poll
    /// wait their own.
    ///
    /// Default: 200 ms.
    public var mergeWait: Duration
    /// How often state and offsets are persisted (after the events so far are delivered).
    ///
    /// Longer means fewer SQLite writes and a longer replay after a crash (with the same event ids). Default: 1 s.
    public var checkpointInterval: Duration
    /// How long a partition read to its end that receives nothing waits before the wall clock stands in for its stream
    /// time in announcing its devices' silence (``StreamClock``); nil: never, its devices' silence waits for its next
    /// message.
    ///
    /// Default: 60 s.
    public var idlePartitionWait: Duration?
    /// What the worker promises its readers across crashes and rebalances: ``ProcessingGuarantee``.
    ///
    /// Default: at-least-once.
    public var processingGuarantee: ProcessingGuarantee
    /// How long the local store may lag the changelog: a checkpoint is written to SQLite when this long has passed
    /// since the last one that was (and at every revocation, assignment, rewind and stop); the others end once their
    /// events and changelog records are delivered.
    ///
    /// A steady stream changes most devices every second, and their rows are most of a checkpoint's cost. A restart
    /// after a crash restores up to this much of the changelog into the store. Zero, or no changelog, writes the store at
    /// every checkpoint. Default: 10 s.
    public var storeInterval: Duration
    /// Most messages taken from librdkafka per poll.
    ///
    /// Default: 10,000.
    public var maxBatch: Int
    /// How many threads apply messages at once.
    ///
    /// The devices are split among them by a hash of the device id (the message key), so each poll's messages spread
    /// over all of them. Default: the number of processors, at most 8.
    public var applyThreadCount: Int
    /// Exit once every assigned partition has been processed to its end (replays, benchmarks).
    ///
    /// Default: false.
    public var untilCaughtUp: Bool
    /// How far out to sea a position still gets the nearest country, in metres (0 turns it off).
    ///
    /// Default: 22,224 (12 nautical miles).
    public var coastalTolerance: Double
    public var tracker: TrackerConfiguration
    /// After the broker refuses a delivery for good, the worker rewinds to its last checkpoint and waits this
    /// long before retrying: `initialBackoff` (default 1 s), doubling with each refusal in a row up to
    /// `maxBackoff` (default 60 s).
    public var deliveryRetry: DeliveryRetry
    /// How much of a refused message its dead letter carries; see ``DeadLetter/Limits``.
    ///
    /// Read from the configuration, the default leaves room under the producer's `message.max.bytes`.
    public var deadLetterLimits: DeadLetter.Limits
    /// The device-state changelog: whether the worker keeps one, and how it creates a missing one.
    public var changelogSettings: ChangelogSettings
    /// Regions, localities and time zones: whether the worker looks them up, and where its index is.
    public var places: Places
    /// The fleet's geofence catalog: whether the worker reads it (``Topics/geofences``).
    public var catalog: CatalogSettings
    /// Raw librdkafka properties (SASL/SSL, tuning).
    ///
    /// Never logged. A key goes to both the consumer and the producer, unless it starts with `consumer.` or
    /// `producer.`: then it goes to that client only, without the prefix (see ``kafkaProperties(for:)``).
    public var kafkaProperties: [String: String]

    public init(
        brokers: String = "localhost:9092",
        topics: Topics = Topics(),
        groupId: String = "geoworker",
        groupInstanceId: String? = nil,
        stateDir: String = "./geoworker-state",
        resetState: Bool = false,
        mergeWait: Duration = .milliseconds(200),
        idlePartitionWait: Duration? = .seconds(60),
        checkpointInterval: Duration = .seconds(1),
        storeInterval: Duration = .seconds(10),
        processingGuarantee: ProcessingGuarantee = .atLeastOnce,
        maxBatch: Int = 10_000,
        applyThreadCount: Int = WorkerConfiguration.defaultApplyThreadCount,
        untilCaughtUp: Bool = false,
        coastalTolerance: Double = CountryIndex.territorialSea,
        tracker: TrackerConfiguration = TrackerConfiguration(),
        deliveryRetry: DeliveryRetry = DeliveryRetry(),
        deadLetterLimits: DeadLetter.Limits = DeadLetter.Limits(),
        changelogSettings: ChangelogSettings = ChangelogSettings(),
        places: Places = Places(),
        catalog: CatalogSettings = CatalogSettings(),
        kafkaProperties: [String: String] = [:]
    ) {
        self.brokers = brokers
        self.topics = topics
        self.groupId = groupId
        self.groupInstanceId = groupInstanceId
        self.stateDir = stateDir
        self.resetState = resetState
        self.mergeWait = mergeWait
        self.idlePartitionWait = idlePartitionWait
        self.checkpointInterval = checkpointInterval
        self.storeInterval = storeInterval
        self.processingGuarantee = processingGuarantee
        self.maxBatch = maxBatch
        self.applyThreadCount = applyThreadCount
        self.untilCaughtUp = untilCaughtUp
        self.coastalTolerance = coastalTolerance
        self.tracker = tracker
        self.deliveryRetry = deliveryRetry
        self.deadLetterLimits = deadLetterLimits
        self.changelogSettings = changelogSettings
        self.places = places
        self.catalog = catalog
        self.kafkaProperties = kafkaProperties
    }

    /// The producer's `transactional.id` under exactly-once (``ProcessingGuarantee/transactionalId(groupId:groupInstanceId:)``).
    public var transactionalId: String? {
        processingGuarantee.transactionalId(groupId: groupId, groupInstanceId: groupInstanceId)
    }

    /// The changelog topic's name: ``Topics/changelog``, else `<groupId>-device-state-changelog`.
    public var changelogTopic: String { topics.changelog ?? DeviceChangelog.defaultTopic(groupId: groupId) }

    /// The group's instances topic (``GroupPresence``): `topics.instances`, else `<groupId>-instances`.
    public var instancesTopic: String { topics.instances ?? "\(groupId)-instances" }
}

extension WorkerConfiguration {
    /// The fleet's geofence catalog (``Topics/geofences``): shared geofences that devices watch by tag (`subscribe`,
    /// ``TrackerConfiguration/catalogTags``), beside the pins each device tracks.
    public struct CatalogSettings: Hashable, Sendable {
        /// Whether every instance reads the catalog topic, at the start and as it changes.
        ///
        /// Default: false: devices have their pins only, and `subscribe` commands are kept for when it is turned on.
        public var enabled: Bool
        /// Whether a catalog topic that does not exist is an empty catalog rather than a start-up error.
        ///
        /// Default: false: a mistyped `topics.geofences` stops the start, naming it.
        public var allowMissingTopic: Bool
        /// How long a replaced or deleted geofence's old version is kept for positions stamped before the change.
        ///
        /// The newest position time released less this is the oldest time the catalog answers for as it stood; a
        /// position older than that meets the catalog as kept (what ended before it is gone).
        ///
        /// Default: 1 hour.
        public var versionRetention: Duration

        public init(enabled: Bool = false, allowMissingTopic: Bool = false, versionRetention: Duration = .seconds(3600))
        {
            self.enabled = enabled
            self.allowMissingTopic = allowMissingTopic
            self.versionRetention = versionRetention
        }
    }
}

extension WorkerConfiguration {
    /// The places index (`region.changed`, `timezone.changed`, the card's region, locality and time zone).
    public struct Places: Hashable, Sendable {
        /// Whether to look places up at all.
        ///
        /// Default: true; the worker then runs without places, with a warning, when no index is found where it looks
        /// by default (an ``index`` that cannot be read stops the start instead).
        public var enabled: Bool
        /// The places index file; nil looks in `PlaceIndex.defaultLocations`.
        public var index: String?

        public init(enabled: Bool = true, index: String? = nil) {
            self.enabled = enabled
            self.index = index
        }
    }

    /// The device-state changelog's settings.
    public struct ChangelogSettings: Hashable, Sendable {
        /// Whether each checkpoint's changed devices go to the changelog topic and assigned partitions are restored
        /// from it.
        ///
        /// Default: true. Off, each instance knows only the devices it processed itself: acceptable for a single
        /// instance only, and every instance of a group must agree.
        public var enabled: Bool
        /// The replication factor of a changelog topic the worker creates; -1 takes the broker's
        /// `default.replication.factor`.
        ///
        /// Default: -1.
        public var replicationFactor: Int

        public init(enabled: Bool = true, replicationFactor: Int = -1) {
            self.enabled = enabled
            self.replicationFactor = replicationFactor
        }
    }
}

extension WorkerConfiguration {
    /// How the worker backs off after a refused delivery.
    public struct DeliveryRetry: Hashable, Sendable {
        /// The wait after the first refusal.
        ///
        /// Default: 1 s.
        public var initialBackoff: Duration
        /// The longest wait, reached by doubling.
        ///
        /// Default: 60 s. At most 240 s: the worker does not poll while it waits, and the group drops a member that
        /// does not poll within `max.poll.interval.ms` (300 s).
        public var maxBackoff: Duration
        /// How many attempts in a row may fail before the worker gives up with ``WorkerError/Code/unavailable``
        /// (the executable's exit status 75): deliveries the broker refuses, or Kafka unreachable at start-up.
        ///
        /// Default (nil): a service never gives up (it waits out what passes, unhealthy while deliveries are
        /// refused); a catch-up run (``WorkerConfiguration/untilCaughtUp``) gives up after
        /// ``catchUpAttempts``, as a job whose caller wants an answer. 0: never, in either mode.
        public var maxAttempts: Int?
        /// How long a delivery may wait for the broker before it counts as refused, and how long, after a rewind,
        /// the worker may go without writing a checkpoint (after a lost assignment: without being assigned again)
        /// before that counts as another refusal: what turns an outage into attempts of the retry budget.
        ///
        /// Default (nil): a service waits out outages however long (deliveries pause, nothing is lost); a catch-up run
        /// waits ``catchUpTimeout``, so that an outage longer than its budget ends it with exit status 75. 0: never.
        public var timeout: Duration?

        /// A catch-up run's attempts by default: with the default back-off, about a minute of waiting in all.
        public static let catchUpAttempts = 6
        /// A catch-up run's delivery timeout by default.
        public static let catchUpTimeout = Duration.seconds(30)

        public init(
            initialBackoff: Duration = .seconds(1),
            maxBackoff: Duration = .seconds(60),
            maxAttempts: Int? = nil,
            timeout: Duration? = nil
        ) {
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
            self.maxAttempts = maxAttempts
            self.timeout = timeout
        }
    }

    /// How long a delivery may wait for the broker, and a rewound worker for its next checkpoint, before either counts
    /// as refused; nil: for ever (see ``DeliveryRetry/timeout``).
    public var deliveryTimeout: Duration? {
        switch deliveryRetry.timeout {
        case .zero?: nil
        case let timeout?: timeout
        case nil: untilCaughtUp ? DeliveryRetry.catchUpTimeout : nil
        }
    }

    /// How many failed attempts in a row the worker takes before it gives up; nil: it never does (see
    /// ``DeliveryRetry/maxAttempts``).
    public var retryBudget: Int? {
        switch deliveryRetry.maxAttempts {
        case 0: nil
        case let attempts?: attempts
        case nil: untilCaughtUp ? DeliveryRetry.catchUpAttempts : nil
        }
    }
}

extension WorkerConfiguration {
    /// One apply thread per processor, up to 8 (beyond that, the single polling thread and the broker
    /// connections limit more than applying does).
    public static var defaultApplyThreadCount: Int { min(ProcessInfo.processInfo.activeProcessorCount, 8) }
}

extension WorkerConfiguration {
    /// The worker's two Kafka clients.
    public enum KafkaClient: String, Sendable, CaseIterable {
        case consumer
        case producer
    }

    /// The librdkafka properties of one client (see ``kafkaProperties(_:for:)``).
    public func kafkaProperties(for client: KafkaClient) -> [String: String] {
        Self.kafkaProperties(kafkaProperties, for: client)
    }

    /// The properties of `properties` that go to `client`.
    ///
    /// The unprefixed ones, and those prefixed with the client's name (without the prefix), which win over an
    /// unprefixed one of the same key. librdkafka warns
    /// about a consumer-only property given to the producer and the other way round; the prefix avoids that.
    public static func kafkaProperties(_ properties: [String: String], for client: KafkaClient) -> [String: String] {
        var shared: [String: String] = [:]
        var own: [String: String] = [:]
        for (key, value) in properties {
            guard let prefixed = KafkaClient.allCases.first(where: { key.hasPrefix($0.rawValue + ".") }) else {
                shared[key] = value
                continue
            }
            if prefixed == client { own[String(key.dropFirst(client.rawValue.count + 1))] = value }
        }
        return shared.merging(own) { $1 }
    }
}

extension WorkerConfiguration {
    /// What the worker logs of its configuration when it starts: where it reads and writes, as whom.
    var summary: Logger.Metadata {
        [
            ServiceLogKey.brokers: "\(brokers)", ServiceLogKey.group: "\(groupId)",
            ServiceLogKey.positionsTopic: "\(topics.positions)", ServiceLogKey.commandsTopic: "\(topics.commands)",
            ServiceLogKey.eventsTopic: "\(topics.events)", ServiceLogKey.applyThreads: "\(applyThreadCount)",
        ]
    }
}
