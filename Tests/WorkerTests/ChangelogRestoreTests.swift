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
