import Configuration
import Kafka
import Logging
import Operations
import TestSupport
import Testing
import Worker

@testable import geoworker

/// The settings of `geoworker run` and of the operator's tools, read in process.
@Suite("Command configuration", .timeLimit(.minutes(5)))
struct CommandConfigurationTests {
    @Test("run: defaults")
    func runDefaults() throws {
        let configuration = try RunConfiguration(config: ConfigReader.inMemory([:]))
        #expect(configuration.logLevel == .info)
        #expect(configuration.shutdownTimeout == .seconds(30))
        #expect(configuration.http.port == 8080)
        #expect(!configuration.http.devices && configuration.http.token == nil, "device data off, no token")
        #expect(configuration.http.streamBuffer == 1000 && configuration.http.recentEvents == 100)
        #expect(configuration.http.mapLimit == 2000)
        #expect(configuration.worker.groupId == "geoworker")
    }

    @Test("run: every key of its own, the worker's and the operations port's")
    func runEveryKey() throws {
        let configuration = try RunConfiguration(
            config: ConfigReader.inMemory([
                "logLevel": "debug", "shutdownTimeoutMs": 5_000, "http.port": 0, "http.host": "127.0.0.1",
                "groupId": "fleet", "topics.events": "fleet.events", "http.devices": true,
                "http.token": ConfigValue("t0ken", isSecret: true), "http.streamBuffer": 50, "http.recentEvents": 0,
                "http.mapLimit": 10,
            ])
        )
        #expect(configuration.http.devices && configuration.http.token == "t0ken")
        #expect(configuration.http.streamBuffer == 50 && configuration.http.recentEvents == 0)
        #expect(configuration.http.mapLimit == 10)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.shutdownTimeout == .seconds(5))
        #expect(configuration.http.port == 0 && configuration.http.host == "127.0.0.1")
        #expect(configuration.worker.groupId == "fleet" && configuration.worker.topics.events == "fleet.events")
    }

    @Test(
        "run: a value that is set but unusable is refused, naming its whole key",
        arguments: [
            ("logLevel", ConfigValue("loud"), "logLevel must be one of trace"),
            ("shutdownTimeoutMs", 5, "shutdownTimeoutMs must be in 100...3600000 (got 5)"),
            ("http.port", "eighty", "http.port must be an integer (got \"eighty\")"),
            ("http.devices", "maybe", "http.devices must be true or false"),
            ("http.token", "", "http.token must not be empty"),
            ("http.streamBuffer", 0, "http.streamBuffer must be in 1...1000000 (got 0)"),
            ("http.mapLimit", 0, "http.mapLimit must be in 1...100000 (got 0)"),
        ] as [(AbsoluteConfigKey, ConfigValue, String)]
    )
    func runUnusable(key: AbsoluteConfigKey, value: ConfigValue, message: String) throws {
        let error = try #require(throws: WorkerError.self) {
            try RunConfiguration(config: ConfigReader.inMemory([key: value]))
        }
        #expect(error.code == .configuration)
        #expect(error.message.contains(message), "\(error.message)")
    }

    @Test("tools: defaults, every key (the same keys as run), and an unusable value")
    func tools() throws {
        let defaults = try ToolConfiguration(config: ConfigReader.inMemory([:]))
        #expect(defaults.brokers == "localhost:9092")
        #expect(defaults.topics == WorkerConfiguration.Topics())
        #expect(defaults.stateDir == "./geoworker-state")
        #expect(defaults.kafkaProperties.isEmpty)

        let set = try ToolConfiguration(
            config: ConfigReader.inMemory([
                "brokers": "kafka:9092", "topics.events": "fleet.events", "topics.commands": "fleet.commands",
                "stateDir": "/srv/state",
                "kafka": ConfigValue(
                    .stringArray(["consumer.fetch.wait.max.ms=5", "sasl.password=x"]),
                    isSecret: true
                ),
            ])
        )
        #expect(set.brokers == "kafka:9092")
        #expect(set.topics.events == "fleet.events" && set.topics.commands == "fleet.commands")
        #expect(set.stateDir == "/srv/state")
        let consumer = set.consumerConfiguration(groupId: "geoworker-tail")
        #expect(consumer.bootstrapServers == "kafka:9092" && consumer.groupId == "geoworker-tail")
        #expect(consumer.properties == ["fetch.wait.max.ms": "5", "sasl.password": "x"])
        #expect(set.producerConfiguration.bootstrapServers == "kafka:9092")
        #expect(set.producerConfiguration.properties == ["sasl.password": "x"])

        let error = try #require(throws: WorkerError.self) {
            try ToolConfiguration(config: ConfigReader.inMemory(["topics.commands": ""]))
        }
        #expect(error.message.contains("topics.commands must not be empty"))
    }
}
