import Addresses
import Configuration
import GeoCore
import Kafka
import TestSupport
import Testing

@testable import Worker

/// Reading the worker's settings in process: the defaults, every key, and a value that is set but unusable.
@Suite("Worker configuration", .timeLimit(.minutes(5)))
struct WorkerConfigurationTests {
    @Test("nothing set: the documented defaults")
    func defaults() throws {
        let configuration = try WorkerConfiguration(config: ConfigReader.inMemory([:]))
        #expect(configuration.brokers == "localhost:9092")
        #expect(
            configuration.topics
                == WorkerConfiguration.Topics(
                    positions: "positions",
                    commands: "commands",
                    events: "events",
                    deadLetters: "geoworker-dead-letters"
                )
        )
        #expect(configuration.groupId == "geoworker")
        #expect(configuration.stateDir == "./geoworker-state")
        #expect(configuration.mergeWait == .milliseconds(200))
        #expect(configuration.checkpointInterval == .seconds(1))
        #expect(configuration.maxBatch == 10_000)
        #expect(configuration.applyThreadCount == WorkerConfiguration.defaultApplyThreadCount)
        #expect(!configuration.untilCaughtUp)
        #expect(configuration.coastalTolerance == 22_224)
        #expect(configuration.tracker == TrackerConfiguration())
        #expect(configuration.kafkaProperties.isEmpty)
        #expect(configuration.deadLetterLimits == DeadLetter.Limits.defaults(messageMaxBytes: 1_000_000))
        #expect(configuration.deliveryRetry == .init(initialBackoff: .seconds(1), maxBackoff: .seconds(60)))
    }

    @Test("the back-off after a refused delivery: set, and refused when the maximum is below the start")
    func deliveryRetry() throws {
        let set = try WorkerConfiguration(
            config: ConfigReader.inMemory(["deliveryRetry.initialBackoffMs": 250, "deliveryRetry.maxBackoffMs": 4_000])
        )
        #expect(set.deliveryRetry == .init(initialBackoff: .milliseconds(250), maxBackoff: .seconds(4)))
        let error = try #require(throws: WorkerError.self) {
            try WorkerConfiguration(
                config: ConfigReader.inMemory([
                    "deliveryRetry.initialBackoffMs": 5_000, "deliveryRetry.maxBackoffMs": 1_000,
                ])
            )
        }
        #expect(error.message.contains("deliveryRetry.maxBackoffMs (1000) must not be below initialBackoffMs"))
        #expect(throws: WorkerError.self) {
            try WorkerConfiguration(config: ConfigReader.inMemory(["deliveryRetry.maxBackoffMs": 600_000]))
        }
    }

    @Test("static membership: groupInstanceId reaches the group's consumer only; none by default")
    func staticMembership() throws {
        let configuration = try WorkerConfiguration(config: ConfigReader.inMemory(["groupInstanceId": "geoworker-0"]))
        #expect(configuration.groupInstanceId == "geoworker-0")
        #expect(KafkaClients.groupConsumerConfiguration(configuration).properties["group.instance.id"] == "geoworker-0")
        #expect(
            KafkaClients.restoreConsumerConfiguration(configuration).properties["group.instance.id"] == nil,
            "the restore consumer joins no group"
        )
        let dynamic = try WorkerConfiguration(config: ConfigReader.inMemory([:]))
        #expect(KafkaClients.groupConsumerConfiguration(dynamic).properties["group.instance.id"] == nil)
    }

    @Test("the delivery timeout: 30 s for a catch-up run, none for a service, set, or 0 for none")
    func deliveryTimeout() throws {
        #expect(try WorkerConfiguration(config: ConfigReader.inMemory([:])).deliveryTimeout == nil)
        let catchUp = try WorkerConfiguration(config: ConfigReader.inMemory(["untilCaughtUp": true]))
        #expect(catchUp.deliveryTimeout == .seconds(30))
        let set = try WorkerConfiguration(config: ConfigReader.inMemory(["deliveryRetry.timeoutMs": 5_000]))
        #expect(set.deliveryTimeout == .seconds(5))
        let never = try WorkerConfiguration(
            config: ConfigReader.inMemory(["untilCaughtUp": true, "deliveryRetry.timeoutMs": 0])
        )
        #expect(never.deliveryTimeout == nil)
    }

    @Test("the dead-letter limits: set, derived from the producer's message.max.bytes, or refused when too large")
    func deadLetterLimits() throws {
        let set = try WorkerConfiguration(
            config: ConfigReader.inMemory(["deadLetters.maxValueBytes": 500_000, "deadLetters.maxKeyBytes": 1_000])
        )
        #expect(set.deadLetterLimits == DeadLetter.Limits(maxValueBytes: 500_000, maxKeyBytes: 1_000))
        let larger = try WorkerConfiguration(
            config: ConfigReader.inMemory([
                "kafka": ConfigValue(.stringArray(["producer.message.max.bytes=4000000"]), isSecret: true)
            ])
        )
        #expect(larger.deadLetterLimits == DeadLetter.Limits.defaults(messageMaxBytes: 4_000_000))
        let error = try #require(throws: WorkerError.self) {
            try WorkerConfiguration(config: ConfigReader.inMemory(["deadLetters.maxValueBytes": 999_000]))
        }
        #expect(error.message.contains("deadLetters.maxValueBytes (999000)"), "\(error.message)")
        #expect(error.message.contains("message.max.bytes (1000000)"), "\(error.message)")
    }

    @Test("the changelog: named after the group by default, on, the broker's replication factor; 0 refused")
    func changelog() throws {
        let defaults = try WorkerConfiguration(config: ConfigReader.inMemory(["groupId": "fleet"]))
        #expect(defaults.changelogTopic == "fleet-device-state-changelog")
        #expect(
            defaults.changelogSettings == WorkerConfiguration.ChangelogSettings(enabled: true, replicationFactor: -1)
        )
        let error = #expect(throws: WorkerError.self) {
            try WorkerConfiguration(config: ConfigReader.inMemory(["changelog.replicationFactor": 0]))
        }
        #expect(error?.message.contains("changelog.replicationFactor") == true, "\(String(describing: error))")
        #expect(throws: WorkerError.self) {
            try WorkerConfiguration(config: ConfigReader.inMemory(["topics.changelog": ""]))
        }
    }

    @Test("the street addresses' settings: every key, each duration in its key's unit; the defaults")
    func addressSettings() throws {
        let defaults = try AddressConfiguration(config: ConfigReader.inMemory([:]))
        #expect(defaults == AddressConfiguration())
        #expect(defaults.timeout == .seconds(10) && defaults.cardWait == .seconds(2))
        #expect(defaults.breakerCoolDown == .seconds(30) && defaults.ttl == .seconds(604_800))
        let set = try AddressConfiguration(
            config: ConfigReader.inMemory([
                "provider": "http://nominatim.local:8088", "dialect": "photon", "bucketMeters": 50,
                "ttlSeconds": 3_600, "maxRequestsPerSecond": 2.5, "userAgent": "fleet (ops@example.com)",
                "timeoutMs": 1_500, "prefetch": true, "cardWaitMs": 250, "queueCapacity": 64, "cacheCapacity": 500,
                "breakerFailures": 2, "breakerCoolDownMs": 45_000,
            ])
        )
        #expect(
            set
                == AddressConfiguration(
                    provider: "http://nominatim.local:8088",
                    dialect: .photon,
                    bucketMeters: 50,
                    ttl: .seconds(3_600),
                    maxRequestsPerSecond: 2.5,
                    userAgent: "fleet (ops@example.com)",
                    timeout: .milliseconds(1_500),
                    prefetch: true,
                    cardWait: .milliseconds(250),
                    queueCapacity: 64,
                    cacheCapacity: 500,
                    breakerFailures: 2,
                    breakerCoolDown: .seconds(45)
                )
        )
    }

    @Test("every key is read, the nested ones through their scopes")
    func everyKey() throws {
        let configuration = try WorkerConfiguration(
            config: ConfigReader.inMemory([
                "brokers": "kafka-1:9092,kafka-2:9092",
                "topics.positions": "fleet.positions", "topics.commands": "fleet.commands",
                "topics.events": "fleet.events", "topics.deadLetters": "fleet.dlq",
                "topics.changelog": "fleet.state", "changelog.enabled": false, "changelog.replicationFactor": 3,
                "deadLetters.maxValueBytes": 400_000, "deadLetters.maxKeyBytes": 2_048,
                "groupId": "fleet-workers", "stateDir": "/var/lib/geoworker",
                "mergeWaitMs": 50, "checkpointIntervalMs": 2_500, "maxBatch": 500, "applyThreads": 3,
                "untilCaughtUp": true, "coastalToleranceMeters": 0,
                "tracker.maxPinsPerDevice": 7, "tracker.maxAccuracyMeters": 250,
                "tracker.assumedAccuracyMeters": 15, "tracker.countryConfirmations": 3,
                "tracker.maxVerticesPerPin": 200, "tracker.maxVerticesPerDevice": 2_000,
                "tracker.maxFixGapSeconds": 120, "tracker.approachHeadingToleranceDegrees": 30,
                "tracker.approachMinimumSpeed": 2.5, "tracker.placeConfirmations": 2,
                "tracker.disabledEvents": ConfigValue(
                    .stringArray(["timezone.changed", "language.suggested"]),
                    isSecret: false
                ),
                "places.enabled": false, "places.index": "/opt/geoworker/places.idx",
                "kafka": ConfigValue(
                    .stringArray(["security.protocol=SASL_SSL", "sasl.password=a=b"]),
                    isSecret: true
                ),
            ])
        )
        #expect(configuration.brokers == "kafka-1:9092,kafka-2:9092")
        #expect(
            configuration.topics
                == WorkerConfiguration.Topics(
                    positions: "fleet.positions",
                    commands: "fleet.commands",
                    events: "fleet.events",
                    deadLetters: "fleet.dlq",
                    changelog: "fleet.state"
                )
        )
        #expect(configuration.changelogTopic == "fleet.state")
        #expect(
            configuration.changelogSettings
                == WorkerConfiguration.ChangelogSettings(enabled: false, replicationFactor: 3)
        )
        #expect(configuration.groupId == "fleet-workers")
        #expect(configuration.stateDir == "/var/lib/geoworker")
        #expect(configuration.mergeWait == .milliseconds(50))
        #expect(configuration.checkpointInterval == .milliseconds(2_500))
        #expect(configuration.maxBatch == 500)
        #expect(configuration.applyThreadCount == 3)
        #expect(configuration.untilCaughtUp)
        #expect(configuration.coastalTolerance == 0)
        #expect(
            configuration.tracker
                == TrackerConfiguration(
                    maxPinsPerDevice: 7,
                    maxAccuracyMeters: 250,
                    assumedAccuracyMeters: 15,
                    countryConfirmations: 3,
                    maxVerticesPerPin: 200,
                    maxVerticesPerDevice: 2_000,
                    maxFixGapSeconds: 120,
                    approachHeadingToleranceDegrees: 30,
                    approachMinimumSpeed: 2.5,
                    placeConfirmations: 2,
                    disabledEventTypes: ["timezone.changed", "language.suggested"]
                )
        )
        #expect(
            configuration.places == WorkerConfiguration.Places(enabled: false, index: "/opt/geoworker/places.idx")
        )
        #expect(configuration.kafkaProperties == ["security.protocol": "SASL_SSL", "sasl.password": "a=b"])
        #expect(configuration.deadLetterLimits == DeadLetter.Limits(maxValueBytes: 400_000, maxKeyBytes: 2_048))
    }

    @Test("trips: off unless enabled, Traccar's thresholds by default; speed: no default limit unless set")
    func tripsAndSpeed() throws {
        let defaults = try WorkerConfiguration(config: ConfigReader.inMemory([:])).tracker
        #expect(defaults.trips == nil)
        #expect(defaults.speeding == SpeedRules())
        #expect(defaults.speeding.limitMetersPerSecond == nil)
        let set = try WorkerConfiguration(
            config: ConfigReader.inMemory([
                "trips.enabled": true, "trips.minimumDistanceMeters": 1_000, "trips.minimumDurationSeconds": 120,
                "trips.minimumParkingSeconds": 600, "trips.maximumGapSeconds": 1_800,
                "speed.limitMetersPerSecond": 27, "speed.minimumDurationSeconds": 15,
                "speed.maximumPlausibleMetersPerSecond": 70, "liveness.silentAfterSeconds": 900,
            ])
        ).tracker
        #expect(set.liveness == LivenessRules(silentAfterSeconds: 900))
        #expect(defaults.liveness.silentAfterSeconds == nil)
        #expect(
            set.trips
                == TripRules(
                    minimumDistanceMeters: 1_000,
                    minimumDurationSeconds: 120,
                    minimumParkingSeconds: 600,
                    maximumGapSeconds: 1_800
                )
        )
        #expect(
            set.speeding
                == SpeedRules(limitMetersPerSecond: 27, minimumDurationSeconds: 15, maximumPlausibleMetersPerSecond: 70)
        )
        #expect(
            try WorkerConfiguration(config: ConfigReader.inMemory(["trips.enabled": true])).tracker.trips == TripRules()
        )
    }

    @Test(
        "a value that is set but unusable is refused, naming its whole key",
        arguments: [
            ("applyThreads", ConfigValue("many"), "applyThreads must be an integer (got \"many\")"),
            ("applyThreads", 0, "applyThreads must be in 1...256 (got 0)"),
            ("untilCaughtUp", "perhaps", "untilCaughtUp must be true or false"),
            ("topics.events", "", "topics.events must not be empty"),
            ("tracker.maxAccuracyMeters", -1, "tracker.maxAccuracyMeters must be in 1.0...1000000.0"),
            ("tracker.maxVerticesPerPin", 2, "tracker.maxVerticesPerPin must be in 3...100000 (got 2)"),
            (
                "tracker.approachHeadingToleranceDegrees", 90,
                "tracker.approachHeadingToleranceDegrees must be in 1.0...89.0"
            ),
            ("kafka", ConfigValue(.stringArray(["=hunter2"]), isSecret: true), "KEY=VALUE"),
            (
                "tracker.disabledEvents",
                ConfigValue(.stringArray(["region.changed", "region.moved"]), isSecret: false),
                "tracker.disabledEvents: \"region.moved\" is not an event type"
            ),
            ("tracker.placeConfirmations", 0, "tracker.placeConfirmations must be in 1...100 (got 0)"),
            ("speed.limitMetersPerSecond", 0, "speed.limitMetersPerSecond must be in 0.1...200.0"),
            ("speed.limitMetersPerSecond", "fast", "speed.limitMetersPerSecond must be a number"),
            ("trips.minimumParkingSeconds", 0, "trips.minimumParkingSeconds must be in 1...86400 (got 0)"),
            ("trips.enabled", "sometimes", "trips.enabled must be true or false"),
            ("liveness.silentAfterSeconds", 30, "liveness.silentAfterSeconds must be in 60...2592000 (got 30)"),
        ] as [(AbsoluteConfigKey, ConfigValue, String)]
    )
    func unusable(key: AbsoluteConfigKey, value: ConfigValue, message: String) throws {
        let error = try #require(throws: WorkerError.self) {
            try WorkerConfiguration(config: ConfigReader.inMemory([key: value]))
        }
        #expect(error.code == .configuration)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(!error.message.contains("hunter2"), "a Kafka property's value may be a password")
    }

    @Test("processingGuarantee: at-least-once by default; exactly-once with an instance id and the changelog only")
    func processingGuarantee() throws {
        #expect(try WorkerConfiguration(config: ConfigReader.inMemory([:])).processingGuarantee == .atLeastOnce)
        #expect(try WorkerConfiguration(config: ConfigReader.inMemory([:])).transactionalId == nil)
        let exactlyOnce = try WorkerConfiguration(
            config: ConfigReader.inMemory([
                "processingGuarantee": "exactly-once", "groupId": "fleet", "groupInstanceId": "worker-3",
            ])
        )
        #expect(exactlyOnce.processingGuarantee == .exactlyOnce)
        #expect(exactlyOnce.transactionalId == "geoworker-fleet-worker-3", "the same for every run of the instance")
        let refusals: [([AbsoluteConfigKey: ConfigValue], String)] = [
            (["processingGuarantee": "exactly-once"], "processingGuarantee exactly-once needs groupInstanceId"),
            (
                ["processingGuarantee": "exactly-once", "groupInstanceId": "a", "changelog.enabled": false],
                "processingGuarantee exactly-once needs the changelog"
            ),
            (["processingGuarantee": "exactly_once"], "processingGuarantee must be at-least-once or exactly-once"),
        ]
        for (values, message) in refusals {
            let error = try #require(throws: WorkerError.self) {
                try WorkerConfiguration(config: ConfigReader.inMemory(values))
            }
            #expect(error.code == .configuration && error.message.contains(message), "\(error.message)")
        }
    }

    @Test("unprefixed Kafka properties go to both clients; a client's prefix sends one to it alone and wins")
    func kafkaPropertiesPerClient() {
        let configuration = WorkerConfiguration(kafkaProperties: [
            "security.protocol": "SASL_SSL",
            "consumer.fetch.wait.max.ms": "5",
            "producer.linger.ms": "20",
            "producer.security.protocol": "SSL",
            "sasl.password": "a=b",
        ])
        #expect(
            configuration.kafkaProperties(for: .consumer) == [
                "security.protocol": "SASL_SSL", "fetch.wait.max.ms": "5", "sasl.password": "a=b",
            ]
        )
        #expect(
            configuration.kafkaProperties(for: .producer) == [
                "security.protocol": "SSL", "linger.ms": "20", "sasl.password": "a=b",
            ]
        )
    }

    @Test("the consumer's queue limits default to a million messages and 512 MB; the operator's values win")
    func consumerQueueLimits() {
        let defaults = KafkaClients.consumerProperties(WorkerConfiguration())
        #expect(defaults["queued.min.messages"] == "1000000")
        #expect(defaults["queued.max.messages.kbytes"] == "524288")
        let lowered = KafkaClients.consumerProperties(
            WorkerConfiguration(kafkaProperties: ["consumer.queued.max.messages.kbytes": "65536"])
        )
        #expect(lowered["queued.max.messages.kbytes"] == "65536")
        #expect(lowered["partition.assignment.strategy"] == "range")
    }
}
