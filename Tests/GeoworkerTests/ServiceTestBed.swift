import Foundation
import Kafka
import Logging
import PartitionOffsets
import TestSupport
import Testing
import Worker

/// A Kafka broker with the worker's four topics (unique names), a state directory, and the built `geoworker run` as a
/// child process against them: the service as an operator runs it.
///
/// The broker is librdkafka's mock cluster (in this process: fault injection, crash expiry, several brokers) or
/// noida-db (a real broker in its own process: CreateTopics, compaction, a message size limit).
final class ServiceTestBed: @unchecked Sendable {
    // @unchecked: used from one test at a time; the brokers and the clients are thread-safe themselves.
    let broker: TestBroker
    let topics: WorkerConfiguration.Topics
    let partitions: Int
    let deadLetterPartitions: Int
    let group = "geoworker-test-\(UUID().uuidString.prefix(8))"
    let stateDir = FileManager.default.temporaryDirectory.appendingPathComponent("geoworker-\(UUID())").path
    static let logger = Logger.quiet("test.service")

    /// A bed on a mock cluster.
    ///
    /// - Parameters:
    ///   - partitions: each input topic's partition count.
    ///   - brokers: how many mock brokers.
    ///   - deadLetterPartitions: more than 1 where the dead letters hold more than the 5 MB the mock
    ///     broker keeps per partition.
    /// - Throws: when the cluster or a topic cannot be made.
    convenience init(partitions: Int = 4, brokers: Int = 1, deadLetterPartitions: Int = 1) throws {
        let cluster = try MockCluster(brokers: brokers, logger: Self.logger)
        try self.init(on: .mock(cluster), partitions: partitions, deadLetterPartitions: deadLetterPartitions)
    }

    /// A bed on `broker`.
    ///
    /// The mock cluster has no CreateTopics: there the changelog is made here, as an operator would on a cluster
    /// that does not let clients create topics; on noida-db the worker creates it, unless `changelogSettings` are
    /// given (a test's compaction timing), with which it is made here. `inputTopicSettings` go to the positions and
    /// commands topics (a real broker's `max.message.bytes`); the mock takes no settings.
    init(
        on broker: TestBroker,
        partitions: Int = 4,
        deadLetterPartitions: Int = 1,
        inputTopicSettings: [String: String] = [:],
        changelogSettings: [String: String]? = nil
    ) throws {
        self.broker = broker
        let suffix = UUID().uuidString.prefix(8)
        topics = WorkerConfiguration.Topics(
            positions: "positions-\(suffix)",
            commands: "commands-\(suffix)",
            events: "events-\(suffix)",
            deadLetters: "dead-letters-\(suffix)"
        )
        self.partitions = partitions
        self.deadLetterPartitions = deadLetterPartitions
        for topic in [topics.positions, topics.commands] {
            try broker.createTopic(topic, partitions: partitions, configuration: inputTopicSettings)
        }
        try broker.createTopic(topics.events, partitions: partitions)
        try broker.createTopic(topics.deadLetters, partitions: deadLetterPartitions)
        let changelog = DeviceChangelog.defaultTopic(groupId: group)
        if case .mock = broker {
            try broker.createTopic(changelog, partitions: partitions)
        } else if let changelogSettings {
            try broker.createTopic(
                changelog,
                partitions: partitions,
                configuration: DeviceChangelog.topicConfiguration.merging(changelogSettings) { $1 }
            )
        }
    }

    /// The mock cluster, for the tests that inject its faults.
    var cluster: MockCluster {
        guard case .mock(let cluster) = broker else { preconditionFailure("a mock cluster's fault on \(broker)") }
        return cluster
    }

    /// `bootstrap.servers` of the bed's broker.
    var bootstrapServers: String { broker.bootstrapServers }

    deinit {
        try? FileManager.default.removeItem(atPath: stateDir)
    }

    /// Produces `records` and waits until every one is delivered.
    ///
    /// - Parameters:
    ///   - records: what to produce.
    ///   - properties: librdkafka producer properties (`message.max.bytes` for large records).
    /// - Throws: when a record is not delivered.
    func produce(_ records: [ProducerRecord], properties: [String: String] = [:]) async throws {
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: bootstrapServers, properties: properties),
            logger: Self.logger
        )
        let reports = await producer.send(records).reports()
        await producer.close()
        let failed = reports.filter { !$0.isDelivered }
        #expect(failed.isEmpty, "undelivered: \(failed.prefix(3))")
    }

    /// `geoworker run` arguments for this bed: quick group timing, so that a restarted member takes over the
    /// partitions of a killed one within seconds; three apply threads whatever the machine's processor count
    /// (compared with reference runs on one).
    ///
    /// - Parameters:
    ///   - extra: more arguments, at the end.
    ///   - instance: another instance's topics and group, instead of the bed's own.
    ///   - omitting: flags left out (with their values), for settings a test gives another way.
    /// - Returns: the arguments after `run`.
    func runArguments(_ extra: [String] = [], as instance: Instance? = nil, omitting: Set<String> = []) -> [String] {
        let instance = instance ?? Instance(events: topics.events, stateDir: stateDir, group: group)
        let arguments = [
            "run", "--brokers", bootstrapServers,
            "--positions-topic", topics.positions, "--commands-topic", topics.commands,
            "--events-topic", instance.events, "--dead-letter-topic", topics.deadLetters,
            "--group-id", instance.group, "--state-dir", instance.stateDir, "--http-port", "0", "--http-host",
            "127.0.0.1",
            "--kafka", "session.timeout.ms=6000", "--kafka", "heartbeat.interval.ms=500",
            "--checkpoint-interval-ms", "200", "--log-level", "info", "--apply-threads", "3",
        ]
        var kept = ["run"]
        var index = 1
        while index < arguments.count {
            if !omitting.contains(arguments[index]) { kept += arguments[index...index + 1] }
            index += 2
        }
        return kept + extra
    }

    /// A worker with its own group, state and events topic reading the same input: the reference run.
    struct Instance {
        let events: String
        let stateDir: String
        let group: String
    }

    /// Starts `geoworker run` in the background.
    func start(
        _ extra: [String] = [],
        as instance: Instance? = nil,
        omitting: Set<String> = [],
        environment: [String: String] = [:]
    ) throws -> BackgroundProcess {
        try BackgroundProcess(
            ChildProcess.builtExecutable("geoworker"),
            runArguments(extra, as: instance, omitting: omitting),
            environment: environment
        )
    }

    /// Starts `geoworker run` and waits until it says it is running (or has ended: the caller's expectation
    /// on `isRunning` then shows its log).
    func startRunning(_ extra: [String] = []) async throws -> BackgroundProcess {
        let child = try start(extra)
        try await waitUntil("geoworker runs") { child.errors.contains("geoworker running") || !child.isRunning }
        #expect(child.isRunning, "\(child.errors.suffix(2000))")
        return child
    }

    /// Runs `geoworker run --until-caught-up` and waits for it (at most `timeout`); returns the ended process, whose
    /// log a test may read.
    @discardableResult
    func runUntilCaughtUp(
        _ extra: [String] = [],
        as instance: Instance? = nil,
        omitting: Set<String> = [],
        timeout: Duration = .seconds(120)
    )
        async throws -> BackgroundProcess
    {
        let child = try start(["--until-caught-up"] + extra, as: instance, omitting: omitting)
        let ending = await child.waitForExit(timeout: timeout)
        #expect(ending == .exited(0), "geoworker run: \(child.errors.suffix(3000))")
        return child
    }

    /// Another instance reading the bed's input: its own group, state directory and events topic, suffixed with `name`
    /// (the topics it needs made here).
    func instance(named name: String) throws -> Instance {
        let instance = Instance(
            events: topics.events + "-" + name,
            stateDir: stateDir + "-" + name,
            group: group + "-" + name
        )
        try broker.createTopic(instance.events, partitions: partitions)
        if case .mock = broker {
            try broker.createTopic(DeviceChangelog.defaultTopic(groupId: instance.group), partitions: partitions)
        }
        return instance
    }

    /// The events of an uninterrupted run over everything in the input topics, by a second worker with its
    /// own group, state directory and events topic (the event ids derive from the input offsets, so they
    /// are the same), applying on one thread: the runs under test, on three, must give the same events.
    ///
    /// `name` tells the reference runs of one bed apart (each reads everything produced so far).
    func referenceEvents(named name: String = "reference", _ extra: [String] = []) async throws -> [Event] {
        let instance = try instance(named: name)
        defer { try? FileManager.default.removeItem(atPath: instance.stateDir) }
        try await runUntilCaughtUp(["--apply-threads", "1"] + extra, as: instance, omitting: ["--apply-threads"])
        return try await readAll(instance.events, partitions: partitions).map(Event.init)
    }

    /// How many partitions `topic` has (0 while it does not exist).
    func partitionCount(_ topic: String) async throws -> Int {
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bootstrapServers, groupId: "count"),
            subscription: .partitions([:]),
            logger: Self.logger
        )
        let count = (try? await consumer.partitionCount(topic: topic)) ?? 0
        await consumer.close()
        return count
    }

    /// The settings of `topic` as the broker reports them; none on the mock, which has no DescribeConfigs.
    func topicSettings(_ topic: String) async throws -> [String: String] {
        guard case .noida(let broker) = broker else { return [:] }
        return try await broker.topicConfiguration(topic)
    }

    /// How many messages one partition holds (its high watermark).
    func messageCount(_ topic: String, partition: Int32) async throws -> Int64 {
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bootstrapServers, groupId: "count"),
            subscription: .partitions([:]),
            logger: Self.logger
        )
        let high = try await consumer.watermarks(of: TopicPartition(topic, partition)).high
        await consumer.close()
        return high
    }

    /// How many messages `topic` holds (the sum of its partitions' high watermarks).
    func messageCount(_ topic: String, partitions: Int) async throws -> Int64 {
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bootstrapServers, groupId: "count"),
            subscription: .partitions([:]),
            logger: Self.logger
        )
        var total: Int64 = 0
        for partition in 0..<partitions {
            total += try await consumer.watermarks(of: TopicPartition(topic, Int32(partition))).high
        }
        await consumer.close()
        return total
    }

    /// Every message of `topic`, from the beginning.
    func readAll(_ topic: String, partitions: Int) async throws -> [Message] {
        var starts: [TopicPartition: StartOffset] = [:]
        for partition in 0..<partitions { starts[TopicPartition(topic, Int32(partition))] = .beginning }
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bootstrapServers, groupId: "reader"),
            subscription: .partitions(starts),
            logger: Self.logger
        )
        var messages: [Message] = []
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(100))
        while !consumer.hasReachedEndOfAssignment && budget.allowsAnotherLook() {
            for record in try await consumer.nextBatch() {
                messages.append(
                    Message(
                        partition: record.partition,
                        offset: record.offset,
                        key: record.key.map { String(decoding: $0, as: UTF8.self) },
                        value: record.value ?? [],
                        headers: Dictionary(
                            record.headers.map { ($0.name, String(decoding: $0.value ?? [], as: UTF8.self)) }
                        ) { $1 }
                    )
                )
            }
        }
        await consumer.close()
        return messages
    }

    /// The events topic's events.
    func events() async throws -> [Event] {
        try await readAll(topics.events, partitions: partitions).map(Event.init)
    }

    /// The events, each id once (its first copy), in the order read: what a consumer deduplicating by id sees.
    func distinctEvents() async throws -> [Event] {
        var seen: Set<String> = []
        return try await events().filter { seen.insert($0.id).inserted }
    }

    /// Runs `tools/schemas/validate.py` over `KIND<TAB>JSON` lines (KIND: position, command or event).
    static func validate(_ lines: [String]) async throws -> ChildProcess.Result {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return try await ChildProcess.run(
            "/usr/bin/env",
            [
                "python3", root.appendingPathComponent("tools/schemas/validate.py").path,
                root.appendingPathComponent("Schemas").path,
            ],
            input: lines.joined(separator: "\n") + "\n"
        )
    }

    struct Message: Sendable {
        let partition: Int32
        let offset: Int64
        let key: String?
        let value: [UInt8]
        let headers: [String: String]
    }

    /// An emitted CloudEvent, with the fields tests compare.
    struct Event: Hashable, Sendable {
        let id: String
        let type: String
        let subject: String
        let time: String
        let key: String?
        let contentType: String?
        /// The whole JSON text: a re-emitted event must be byte-identical.
        let json: String

        init(_ message: Message) throws {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(message.value)) as? [String: Any])
            id = try #require(object["id"] as? String)
            type = try #require(object["type"] as? String)
            subject = try #require(object["subject"] as? String)
            time = try #require(object["time"] as? String)
            key = message.key
            contentType = message.headers["content-type"]
            json = String(decoding: message.value, as: UTF8.self)
        }
    }
}

/// Deterministic traffic for the service tests: devices driving east from Strasbourg (France) over the Rhine
/// into Germany, each tracking a pin it starts inside (an initial enter) and one across the border.
struct BorderTraffic {
    let devices: Int
    let positionsPerDevice: Int
    let topics: WorkerConfiguration.Topics
    static let start: Int64 = 1_795_300_000_000

    func deviceId(_ device: Int) -> String { "device-\(device)" }

    /// The `track` commands, stamped a second before each device's first position.
    func commands() -> [ProducerRecord] {
        (0..<devices).flatMap { device -> [ProducerRecord] in
            let latitude = latitude(of: device)
            return [
                command(
                    device,
                    #"{"type":"track","deviceId":"\#(deviceId(device))","pin":{"id":"depot","lat":\#(latitude),"lon":7.70,"radius":1500,"title":"Strasbourg depot"}}"#
                ),
                command(
                    device,
                    #"{"type":"track","deviceId":"\#(deviceId(device))","pin":{"id":"customer","lat":\#(latitude),"lon":7.88,"radius":1200}}"#
                ),
            ]
        }
    }

    /// Pins changed halfway through the drive, stamped between two fixes (`step` and the one before): every third
    /// device untracks its customer pin before it reaches it, the next tracks a pin it reaches a few fixes later.
    ///
    /// A lost untrack brings back the customer's entered and exited events; a track applied late, after positions
    /// stamped later, decides the new pin at another fix (or outside it, and never announces it): what neither a
    /// handover nor the order of fetches may change.
    func pinChanges(atStep step: Int) -> [ProducerRecord] {
        let time = Self.start + Int64(step) * 10_000 - 5_000
        return (0..<devices).compactMap { device -> ProducerRecord? in
            switch device % 3 {
            case 0:
                return command(
                    device,
                    #"{"type":"untrack","deviceId":"\#(deviceId(device))","pinId":"customer"}"#,
                    at: time
                )
            case 1:
                return command(
                    device,
                    #"{"type":"track","deviceId":"\#(deviceId(device))","pin":{"id":"beyond","lat":\#(latitude(of: device)),"lon":7.835,"radius":700}}"#,
                    at: time
                )
            default:
                return nil
            }
        }
    }

    /// Pins swapped at the same instant as ``pinChanges(atStep:)``: every third device (those that change nothing
    /// there) untracks its customer pin and tracks another one, two commands of one device one after the other.
    ///
    /// Two commands of one device in a row: one of them applied and not the other (the later one's offset taken for
    /// both) leaves the customer pin tracked, and its entered and exited events come back.
    func pinSwaps(atStep step: Int) -> [ProducerRecord] {
        let time = Self.start + Int64(step) * 10_000 - 5_000
        return (0..<devices).filter { $0 % 3 == 2 }.flatMap { device -> [ProducerRecord] in
            [
                command(
                    device,
                    #"{"type":"untrack","deviceId":"\#(deviceId(device))","pinId":"customer"}"#,
                    at: time
                ),
                command(
                    device,
                    #"{"type":"track","deviceId":"\#(deviceId(device))","pin":{"id":"dock","lat":\#(latitude(of: device)),"lon":7.92,"radius":600}}"#,
                    at: time
                ),
            ]
        }
    }

    /// The positions, device by device in time order, one every 10 s from longitude 7.66 to 7.96.
    func positions() -> [ProducerRecord] {
        (0..<devices).flatMap { device in
            (0..<positionsPerDevice).map { step in position(device, step: step) }
        }
    }

    func position(_ device: Int, step: Int) -> ProducerRecord {
        let longitude = 7.66 + 0.30 * Double(step) / Double(max(1, positionsPerDevice - 1))
        let time = Self.start + Int64(step) * 10_000
        let json =
            #"{"deviceId":"\#(deviceId(device))","lat":\#(latitude(of: device)),"lon":\#(longitude),"timestamp":\#(time),"accuracy":8,"languages":["en-GB"]}"#
        return ProducerRecord(
            topic: topics.positions,
            key: Array(deviceId(device).utf8),
            value: Array(json.utf8),
            timestampMilliseconds: time
        )
    }

    private func command(_ device: Int, _ json: String, at time: Int64 = Self.start - 1000) -> ProducerRecord {
        ProducerRecord(
            topic: topics.commands,
            key: Array(deviceId(device).utf8),
            value: Array(json.utf8),
            timestampMilliseconds: time
        )
    }

    /// Spread over 2 km north to south so the devices do not all cross at one point.
    private func latitude(of device: Int) -> Double { 48.565 + Double(device % 20) * 0.001 }
}
