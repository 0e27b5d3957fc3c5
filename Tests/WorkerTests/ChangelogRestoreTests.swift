import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import MetricsTestKit
import PartitionOffsets
import StateStore
import TestSupport
import Testing
import Threads

@testable import Worker

/// Restoring changelog partitions into a real SQLite store from a real (mock) broker.
@Suite("Restoring devices from the changelog", .timeLimit(.minutes(5)))
struct ChangelogRestoreTests {
    let cluster: MockCluster
    let topic = "group-device-state-changelog"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("restore-\(UUID())").path

    static let quiet = Logger.quiet("test.restore")

    init() throws {
        cluster = try MockCluster(brokers: 1, logger: Self.quiet)
        try cluster.createTopic(topic, partitions: 4)
    }

    func restore(
        _ store: StateStore,
        _ partitions: Set<Int32>,
        metrics: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws -> ChangelogRestore.Report {
        let restore = ChangelogRestore(
            topic: topic,
            store: store,
            consumerConfiguration: ConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupId: "restore"
            ),
            logger: Self.quiet,
            metricsFactory: metrics
        )
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupId: "watermarks"),
            subscription: .partitions([:]),
            logger: Self.quiet
        )
        defer { consumer.close() }
        return try restore.restore(partitions, watermarksFrom: consumer)
    }

    func produce(_ states: [DeviceState], partition: Int32) throws {
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: Self.quiet
        )
        defer { producer.close() }
        let records = states.map {
            ProducerRecord(
                topic: topic,
                partition: partition,
                key: Array($0.deviceId.utf8),
                value: DeviceStateEncoding.encode($0)
            )
        }
        let failed = producer.send(records).wait().filter { !$0.isDelivered }
        #expect(failed.isEmpty)
    }

    @Test("a store that never had a partition restores all of it; later, only what was written since")
    func restoresWhatIsBehind() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let first = (0..<25).map { DeviceState(deviceId: "d\($0)", country: "FR", inputPartition: 2) }
        try produce(first, partition: 2)
        try produce([DeviceState(deviceId: "elsewhere", inputPartition: 1)], partition: 1)

        let metrics = TestMetrics()
        var report = try restore(store, [2, 3], metrics: metrics)
        #expect(report.records == [2: 25])
        // What an operator watches during a restore: records restored, and none left, per partition.
        #expect(try metrics.expectCounter(MetricName.changelogRestored, [("partition", "2")]).totalValue == 25)
        #expect(try metrics.expectGauge(MetricName.changelogRestoreRemaining, [("partition", "2")]).lastValue == 0)
        #expect(try store.loadDevices(partitions: [2]).count == 25)
        #expect(try store.loadDevices(partitions: [1]).isEmpty, "partition 1 was not asked for")
        // Partition 3 is empty: the store holds all of it, and its own records will follow on from 0.
        #expect(try store.loadChangelogOffsets() == [2: 25, 3: 0])

        // An uncompacted changelog: one device's records of several checkpoints; the last one counts.
        var moved = first[3]
        for country in ["DE", "NL", "BE", "LU", "AT", "CH"] {
            moved.country = country
            try produce([moved, first[5]], partition: 2)
        }
        report = try restore(store, [2, 3])
        #expect(report.records == [2: 12], "only the records written since")
        #expect(try store.loadDevices(partitions: [2]).first { $0.deviceId == "d3" }?.country == "CH")
        #expect(try restore(store, [2, 3]).records.isEmpty, "nothing is behind any more")
    }

    @Test(
        "a store back with older states than another instance wrote: they are replaced, counted; a late older record is not"
    )
    func staleStatesReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        func state(_ id: String, positions: Int64, country: String) -> DeviceState {
            DeviceState(
                deviceId: id,
                country: country,
                inputPartition: 2,
                appliedOffsets: AppliedOffsets(positions: positions, commands: 3)
            )
        }
        // What this instance stored before it went away.
        try store.commit(
            devices: [
                EncodedDevice(state("d1", positions: 10, country: "FR")),
                EncodedDevice(state("d3", positions: 50, country: "FR")),
            ],
            offsets: [:],
            changelogOffsets: [2: 0]
        )
        // Meanwhile another instance moved d1 on and logged d2; d3's record is an older one written late.
        try produce(
            [
                state("d1", positions: 20, country: "DE"), state("d2", positions: 5, country: "DE"),
                state("d3", positions: 40, country: "BE"),
            ],
            partition: 2
        )

        let metrics = TestMetrics()
        let report = try restore(store, [2], metrics: metrics)
        #expect(report.outcome == RestoreOutcome(replaced: 1, keptNewer: 1))
        #expect(try metrics.expectCounter(MetricName.changelogRestoreReplacedStates).totalValue == 1)
        #expect(try metrics.expectCounter(MetricName.changelogRestoreKeptStates).totalValue == 1)
        let stored = Dictionary(uniqueKeysWithValues: try store.loadDevices().map { ($0.deviceId, $0.country) })
        #expect(stored == ["d1": "DE", "d2": "DE", "d3": "FR"])
    }
}

@Suite("Where assigned partitions start", .timeLimit(.minutes(5)))
struct PartitionStartTests {
    let positions = TopicPartition("positions", 0)
    let commands = TopicPartition("commands", 0)
    let fresh = TopicPartition("positions", 1)

    @Test("the later of the store's and the group's offset; either alone; neither leaves the partition out")
    func laterOfStoredAndCommitted() {
        let starts = PartitionHandover.startOffsets(
            assigned: [positions, commands, fresh, TopicPartition("commands", 1)],
            stored: [positions: 100, commands: 40],
            committed: [positions: 250, commands: 30, fresh: 7]
        )
        #expect(starts == [positions: 250, commands: 40, fresh: 7])
    }

}

/// Restoring a changelog written in transactions, with the aborted ones a killed incarnation leaves, on noida-db (the
/// mock writes no transaction markers).
@Suite("Restoring a transactional changelog, on noida-db", .timeLimit(.minutes(10)))
struct TransactionalChangelogRestoreTests {
    let topic = "group-device-state-changelog"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("restore-\(UUID())").path

    /// The exactly-once crash-restart of issue 62.
    ///
    /// An incarnation killed in a transaction (aborted by the next one's start), a restore that read to the end after
    /// that abort, then the next incarnation's committed checkpoints. noida-db answers a read that starts past an abort with that aborted transaction still listed, and librdkafka
    /// then skips the producer's every later record up to its next abort: read from there, the committed records
    /// would never reach the store.
    @Test("records committed after an aborted transaction reach a store that had read up to that abort")
    func committedAfterAnAbort() async throws {
        let broker = try await NoidaBroker()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try broker.createTopic(topic, partitions: 1)
        let store = try StateStore(directory: directory)
        let restore = ChangelogRestore(
            topic: topic,
            store: store,
            consumerConfiguration: ConsumerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                groupId: "restore",
                properties: ["isolation.level": "read_committed"]
            ),
            logger: ChangelogRestoreTests.quiet,
            metricsFactory: NOOPMetricsHandler.instance,
            transactional: true
        )
        let watermarks = try Consumer(
            configuration: ConsumerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                groupId: "watermarks",
                properties: ["isolation.level": "read_committed"]
            ),
            subscription: .partitions([:]),
            logger: ChangelogRestoreTests.quiet
        )
        let (topic, id) = (topic, "worker-\(UUID().uuidString.prefix(6))")
        let state = Self.state

        // The first incarnation commits a checkpoint, then is killed inside the next: the second one's start aborts it.
        try await DedicatedThread.runOnce(name: "incarnations") { () throws in
            let first = try Self.producer(broker, id: id)
            defer { first.close(timeout: .zero) }
            try Self.commit([state("d1", "FR")], topic: topic, by: first)
            try first.beginTransaction()
            _ = first.send(Self.records([state("d1", "ES"), state("d2", "ES")], topic: topic)).wait()
            let second = try Self.producer(broker, id: id)
            second.close(timeout: .zero)
        }
        #expect(try restore.restore([0], watermarksFrom: watermarks).records == [0: 1])
        #expect(try store.loadDevices().map(\.country) == ["FR"], "the aborted records are not restored")

        // The third incarnation commits two checkpoints after that abort, and is killed inside a third.
        try await DedicatedThread.runOnce(name: "incarnations") { () throws in
            let third = try Self.producer(broker, id: id)
            defer { third.close(timeout: .zero) }
            try Self.commit([state("d1", "DE"), state("d2", "DE")], topic: topic, by: third)
            try Self.commit([state("d3", "NL")], topic: topic, by: third)
            try third.beginTransaction()
            _ = third.send(Self.records([state("d1", "BE")], topic: topic)).wait()
            let fourth = try Self.producer(broker, id: id)
            fourth.close(timeout: .zero)
        }
        let report = try restore.restore([0], watermarksFrom: watermarks)
        #expect(report.records == [0: 3], "the committed records since the store's offset")
        let countries = Dictionary(uniqueKeysWithValues: try store.loadDevices().map { ($0.deviceId, $0.country) })
        #expect(countries == ["d1": "DE", "d2": "DE", "d3": "NL"])
        await watermarks.close()
    }

    @Sendable private static func state(_ deviceId: String, _ country: String) -> DeviceState {
        DeviceState(deviceId: deviceId, country: country, inputPartition: 0)
    }

    private static func producer(_ broker: NoidaBroker, id: String) throws -> Producer {
        let producer = try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: broker.bootstrapServers,
                deliveryTimeout: .seconds(30),
                transactionalId: id
            ),
            logger: ChangelogRestoreTests.quiet
        )
        try producer.initTransactions()
        return producer
    }

    private static func records(_ states: [DeviceState], topic: String) -> [ProducerRecord] {
        states.map {
            ProducerRecord(
                topic: topic,
                partition: 0,
                key: Array($0.deviceId.utf8),
                value: DeviceStateEncoding.encode($0)
            )
        }
    }

    private static func commit(_ states: [DeviceState], topic: String, by producer: Producer) throws {
        try producer.beginTransaction()
        let delivered = producer.send(records(states, topic: topic)).wait()
        #expect(delivered.allSatisfy { $0.isDelivered })
        try producer.commitTransaction()
    }
}
