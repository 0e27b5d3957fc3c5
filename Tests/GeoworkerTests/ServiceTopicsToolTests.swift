import Foundation
import Kafka
import TestSupport
import Testing

/// `geoworker topics create|check` against noida-db, a Kafka-protocol broker that has CreateTopics (librdkafka's mock
/// has none): the first step of running against a real Kafka.
// Ten minutes: its programs wait for one of the suite-wide program slots (one per core, ChildProcess), which the
// demo's and the first run's programs hold for minutes while the whole suite runs.
@Suite("geoworker topics", .serialized, .timeLimit(.minutes(10)))
struct ServiceTopicsToolTests {
    /// A config file naming this test's topics, as a user would keep one for `geoworker run`.
    private static func configFile(_ broker: NoidaBroker, prefix: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("topics-\(UUID().uuidString).json")
            .path
        let settings: [String: Any] = [
            "brokers": broker.bootstrapServers,
            "groupId": prefix,
            "topics": [
                "positions": "\(prefix)-positions", "commands": "\(prefix)-commands", "events": "\(prefix)-events",
                "deadLetters": "\(prefix)-dead-letters", "geofences": "\(prefix)-geofences",
            ],
            "catalog": ["enabled": true],
            "http": ["advertisedAddress": "http://10.0.0.5:8080"],
        ]
        try JSONSerialization.data(withJSONObject: settings).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "check names what is missing; create makes every topic, the changelog, the catalog and the instances compacted; check passes"
    )
    func createThenCheck() async throws {
        let broker = try await NoidaBroker()
        defer { broker.stop() }
        let config = try Self.configFile(broker, prefix: "fleet")
        defer { try? FileManager.default.removeItem(atPath: config) }

        let before = try await runGeoworker(["topics", "check", "--config", config])
        #expect(before.status != 0)
        #expect(before.errors.contains("the positions topic fleet-positions does not exist"), "\(before.errors)")

        let created = try await runGeoworker(["topics", "create", "--config", config, "--partitions", "6"])
        #expect(created.status == 0, "\(created.output)\(created.errors)")
        for topic in ["positions", "commands", "events", "dead-letters", "device-state-changelog", "geofences"] {
            let line = created.output.split(separator: "\n").first { $0.hasPrefix("fleet-\(topic) ") } ?? ""
            #expect(line.contains("6 partitions") && line.hasSuffix("created"), "\(topic): \(created.output)")
        }
        // The group's instances topic (http.advertisedAddress is set): one partition, whatever --partitions says.
        let instances = created.output.split(separator: "\n").first { $0.hasPrefix("fleet-instances ") } ?? ""
        #expect(instances.contains(" 1 partition") && instances.hasSuffix("created"), "\(created.output)")
        for compacted in ["fleet-device-state-changelog", "fleet-geofences", "fleet-instances"] {
            let settings = try await broker.topicConfiguration(compacted)
            #expect(settings["cleanup.policy"] == "compact", "\(compacted): \(settings)")
        }
        let after = try await runGeoworker(["topics", "check", "--config", config])
        #expect(after.status == 0, "\(after.output)\(after.errors)")

        // Again: nothing to do, nothing changed.
        let again = try await runGeoworker(["topics", "create", "--config", config, "--partitions", "3"])
        #expect(again.status == 0, "\(again.errors)")
        #expect(again.output.contains(/fleet-positions +.* 6 partitions .*exists/), "\(again.output)")
    }

    @Test("an existing positions topic decides the co-partitioned ones; a commands topic that differs is named")
    func coPartitioning() async throws {
        let broker = try await NoidaBroker()
        defer { broker.stop() }
        let config = try Self.configFile(broker, prefix: "depot")
        defer { try? FileManager.default.removeItem(atPath: config) }
        try broker.createTopic("depot-positions", partitions: 3)

        let created = try await runGeoworker(["topics", "create", "--config", config, "--partitions", "8"])
        #expect(created.status == 0, "\(created.output)\(created.errors)")
        #expect(created.output.contains(/depot-commands +.* 3 partitions .*created/), "\(created.output)")
        #expect(created.output.contains(/depot-device-state-changelog +.* 3 partitions .*created/), "\(created.output)")
        #expect(created.output.contains(/depot-events +.* 8 partitions .*created/), "\(created.output)")

        let other = try await NoidaBroker()
        defer { other.stop() }
        let mismatched = try Self.configFile(other, prefix: "yard")
        defer { try? FileManager.default.removeItem(atPath: mismatched) }
        try other.createTopic("yard-positions", partitions: 4)
        try other.createTopic("yard-commands", partitions: 2)
        let refused = try await runGeoworker(["topics", "check", "--config", mismatched])
        #expect(refused.status != 0)
        #expect(
            refused.errors.contains("the commands topic yard-commands has 2 partitions and yard-positions has 4"),
            "\(refused.errors)"
        )
    }

    @Test("pins sends only to a commands topic the worker reads: a mistyped one, or one not co-partitioned, is named")
    func pinsChecksItsTopic() async throws {
        let broker = try await NoidaBroker()
        defer { broker.stop() }
        try broker.createTopic("positions", partitions: 4)
        try broker.createTopic("commands", partitions: 2)
        let track = [
            "pins", "track", "--device", "truck-17", "--id", "depot", "--lat", "46.17", "--lon", "6.04", "--radius",
            "500", "--brokers", broker.bootstrapServers,
        ]
        let mistyped = try await runGeoworker(track + ["--commands-topic", "comands"])
        #expect(mistyped.status != 0)
        #expect(mistyped.errors.contains("there is no topic comands at"), "\(mistyped.errors)")
        let metadata = try Producer(configuration: ProducerConfiguration(bootstrapServers: broker.bootstrapServers))
        await #expect(throws: KafkaError.self, "the tool made no topic") {
            try await metadata.partitionCount(topic: "comands", timeout: .seconds(5))
        }
        await metadata.close(timeout: .zero)
        let unaligned = try await runGeoworker(track)
        #expect(unaligned.status != 0)
        #expect(unaligned.errors.contains("commands has 2 partitions and positions has 4"), "\(unaligned.errors)")
        try broker.createTopic("fleet-commands", partitions: 4)
        let sent = try await runGeoworker(track + ["--commands-topic", "fleet-commands"])
        #expect(sent.status == 0, "\(sent.errors)")
        let away = try await runGeoworker(Array(track.dropLast(2)) + ["--brokers", "127.0.0.1:1"])
        #expect(away.status != 0)
        #expect(away.errors.contains("cannot reach Kafka at 127.0.0.1:1 within 10 s"), "\(away.errors)")
    }
}
