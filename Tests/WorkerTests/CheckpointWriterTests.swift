import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import PartitionOffsets
import StateStore
import TestSupport
import Testing

@testable import Worker

/// The checkpoint writer against a real (mock) broker and a real SQLite file: a checkpoint reaches the
/// store only after the records it covers are delivered, and never after a record it covers was lost.
@Suite("Writing checkpoints off the worker's loop", .timeLimit(.minutes(5)))
struct CheckpointWriterTests {
    let cluster: MockCluster
    let topic = "events"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpoints-\(UUID())").path

    /// The clients' own warnings about the broker taken down are expected here.
    static let quiet = Logger.quiet("test.checkpoints")

    init() throws {
        cluster = try MockCluster(brokers: 1, logger: Self.quiet)
        try cluster.createTopic(topic, partitions: 2)
    }

    /// Runs `body` with a store in a fresh directory, a writer on it and a producer to the cluster; cleans up.
    func withWriter(
        deliveryTimeout: Duration = .seconds(300),
        cluster: MockCluster? = nil,
        _ body: (StateStore, CheckpointWriter, Producer) throws -> Void
    ) throws {
        let cluster = cluster ?? self.cluster
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        let writer = CheckpointWriter(
            store: store,
            durations: Metrics.Timer(label: MetricName.checkpointDuration, factory: NOOPMetricsHandler.instance)
        )
        defer { writer.stop() }
        let producer = try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                deliveryTimeout: deliveryTimeout
            ),
            logger: Self.quiet
        )
        defer { producer.close() }
        try body(store, writer, producer)
    }

    func checkpoint(_ deliveries: DeliveryBatch, device: String, next offset: Int64) -> Checkpoint {
        Checkpoint(
            deliveries: [deliveries],
            devices: [[DeviceState(deviceId: device, languages: ["fr-FR"], country: "FR")]],
            offsets: [TopicPartition("positions", 0): offset]
        )
    }

    func events(_ count: Int) -> [ProducerRecord] {
        (0..<count).map { ProducerRecord(topic: topic, key: "device-\($0)", value: "event \($0)") }
    }

    @Test("a checkpoint is written once its records are delivered, in one go with its offsets")
    func writtenAfterDelivery() throws {
        try withWriter { store, writer, producer in
            try cluster.takeBrokerDown(1)
            let deliveries = producer.send(events(10))
            writer.write(checkpoint(deliveries, device: "device-a", next: 42))
            // Watched for a second, a writer that did not wait for the deliveries would be seen committing within
            // milliseconds: the store is looked at every 10 ms, and must stay empty throughout.
            var writtenEarly = false
            let watchedUntil = ContinuousClock.now + .seconds(1)
            while ContinuousClock.now < watchedUntil && !writtenEarly {
                writtenEarly = try !store.loadOffsets().isEmpty || !store.loadDevices().isEmpty
                Thread.sleep(forTimeInterval: 0.01)
            }
            #expect(!deliveries.isComplete)
            #expect(!writtenEarly, "nothing is written while its events are undelivered")
            #expect(writer.takeAnswer() == nil, "no answer before it is written")

            try cluster.bringBrokerUp(1)
            let answer = try #require(writer.waitForAnswer())
            #expect(deliveries.wait().allSatisfy { $0.isDelivered })
            let key = TopicPartition("positions", 0)
            #expect(try store.loadOffsets() == [key: 42])
            #expect(try store.loadDevices().map(\.deviceId) == ["device-a"])
            #expect(try answer.get() == .init(logged: [key: 42], stored: [key: 42]), "the answer is the offsets stored")
            #expect(writer.takeAnswer() == nil, "an answer is taken once")
        }
    }

    @Test("checkpoints written one after another: each answer the offsets it stored, the store the newest")
    func writtenInOrder() throws {
        try withWriter { store, writer, producer in
            let key = TopicPartition("positions", 0)
            for next in Int64(1)...5 {
                writer.write(checkpoint(producer.send(events(100)), device: "device-\(next)", next: next * 100))
                let answer = try #require(writer.waitForAnswer()).get()
                let stored = try store.loadOffsets()[key]
                #expect(answer == .init(logged: [key: next * 100], stored: [key: next * 100]))
                #expect(stored == next * 100, "after checkpoint \(next)")
            }
            #expect(try store.loadOffsets() == [TopicPartition("positions", 0): 500])
            #expect(try store.loadDevices().count == 5)
        }
    }

    @Test("a lost record: the checkpoint is refused, with the cause, and nothing of it reaches the store")
    func lostDeliveryRefusesTheCheckpoint() throws {
        try withWriter(deliveryTimeout: .seconds(1)) { store, writer, producer in
            try cluster.takeBrokerDown(1)
            writer.write(checkpoint(producer.send(events(3)), device: "device-a", next: 7))
            let refusal = try #require(writer.waitForAnswer()).failureValue
            try cluster.bringBrokerUp(1)
            #expect(refusal?.code == .delivery)
            #expect(refusal?.isCheckpointRefusal == true, "refused, not failed: the worker rewinds")
            // The cause survives: the librdkafka code, and that retrying this write cannot help.
            #expect((refusal?.underlying as? DeliveryRefusal)?.firstError?.code == .messageTimedOut)
            #expect(refusal?.isRetriable == false)
            #expect(try store.loadOffsets().isEmpty)
            #expect(try store.loadDevices().isEmpty)
        }
    }

    @Test("changed devices reach the changelog after the events and before the store, which notes the offset reached")
    func changelogBetweenEventsAndStore() throws {
        let changelog = "group-device-state-changelog"
        try cluster.createTopic(changelog, partitions: 4)
        try withWriter(deliveryTimeout: .seconds(2)) { store, writer, producer in
            var taken = checkpoint(producer.send(events(3)), device: "device-a", next: 42)
            taken.devices = [[DeviceState(deviceId: "device-a", country: "FR", inputPartition: 3)]]
            taken.changelog = DeviceChangelog.Sink(topic: changelog, producer: producer)
            writer.write(taken)
            #expect(try writer.waitForAnswer()?.get() != nil)
            #expect(try store.loadChangelogOffsets() == [3: 1], "one record, in the device's input partition")
            #expect(try store.loadDevices().map(\.country) == ["FR"])

            // A changelog record the broker refuses stops the checkpoint before the store.
            cluster.refuseNext(100, .produce, with: .topicAuthorizationFailed)
            defer { cluster.stopRefusing(.produce) }
            var refused = checkpoint(producer.send([]), device: "device-a", next: 50)
            refused.devices = [[DeviceState(deviceId: "device-a", country: "DE", inputPartition: 3)]]
            refused.changelog = DeviceChangelog.Sink(topic: changelog, producer: producer)
            writer.write(refused)
            let refusal = try #require(writer.waitForAnswer()).failureValue
            #expect(refusal?.message.contains(changelog) == true, "\(String(describing: refusal))")
            #expect(try store.loadDevices().map(\.country) == ["FR"])
            #expect(try store.loadOffsets() == [TopicPartition("positions", 0): 42])

            // An assignment that starts a partition past the store's offset while the refusal waits for its
            // rewind: the start is stored (the worker rewinds to it).
            let moved = TopicPartition("positions", 1)
            try writer.writeOffsets([moved: 7])
            #expect(try store.loadOffsets()[moved] == 7)
        }
    }

    @Test(
        "the store lagging its changelog: a checkpoint not stored is logged only; the next stored one, or the backlog alone, writes all of it"
    )
    func storeLagsChangelog() throws {
        let changelog = "group-device-state-changelog"
        try cluster.createTopic(changelog, partitions: 4)
        try withWriter(deliveryTimeout: .seconds(2)) { store, writer, producer in
            let sink = DeviceChangelog.Sink(topic: changelog, producer: producer)
            func taken(_ device: String, _ country: String, next: Int64) -> Checkpoint {
                var checkpoint = checkpoint(producer.send(events(2)), device: device, next: next)
                checkpoint.devices = [[DeviceState(deviceId: device, country: country, inputPartition: 3)]]
                checkpoint.changelog = sink
                return checkpoint
            }
            let key = TopicPartition("positions", 0)
            writer.write(taken("device-a", "FR", next: 10), storing: false)
            let first = try #require(writer.waitForAnswer()).get()
            #expect(first.logged == [key: 10] && first.stored == nil)
            #expect(first.backlog.offsets == [key: 10] && first.backlog.devices.keys.sorted() == ["device-a"])
            #expect(try store.loadOffsets().isEmpty, "not stored: the store lags")
            #expect(try store.loadDevices().isEmpty)
            writer.write(taken("device-a", "DE", next: 20), storing: false, backlog: first.backlog)
            let second = try #require(writer.waitForAnswer()).get()
            #expect(second.stored == nil && second.backlog.offsets == [key: 20])
            writer.write(taken("device-b", "IT", next: 30), storing: true, backlog: second.backlog)
            #expect(try #require(writer.waitForAnswer()).get() == .init(logged: [key: 30], stored: [key: 30]))
            #expect(try store.loadOffsets() == [key: 30])
            let stored = try store.loadDevices().sorted { $0.deviceId < $1.deviceId }
            #expect(
                stored.map(\.country) == ["DE", "IT"],
                "each device's newest state, the backlog's with the checkpoint's"
            )
            #expect(try store.loadChangelogOffsets() == [3: 3], "the three checkpoints' records, one span")

            writer.write(taken("device-c", "ES", next: 40), storing: false)
            let backlog = try #require(writer.waitForAnswer()).get().backlog
            #expect(try writer.storeBacklog(backlog) == [key: 40])
            #expect(try store.loadOffsets() == [key: 40])
            #expect(try store.loadDevices().count == 3)
            #expect(try store.loadChangelogOffsets() == [3: 4])
        }
    }

    @Test("a checkpoint whose events are not delivered sends nothing to the changelog, whose broker is up")
    func noChangelogBeforeEvents() throws {
        let changelog = "group-device-state-changelog"
        let twoBrokers = try MockCluster(brokers: 2, logger: Self.quiet)
        try twoBrokers.createTopic(topic, partitions: 1)
        try twoBrokers.createTopic(changelog, partitions: 1)
        try twoBrokers.setLeader(of: topic, partition: 0, to: 1)
        try twoBrokers.setLeader(of: changelog, partition: 0, to: 2)
        try withWriter(deliveryTimeout: .seconds(1), cluster: twoBrokers) { store, writer, producer in
            try twoBrokers.takeBrokerDown(1)
            var taken = checkpoint(producer.send(events(3)), device: "device-a", next: 7)
            taken.devices = [[DeviceState(deviceId: "device-a", country: "FR", inputPartition: 0)]]
            taken.changelog = DeviceChangelog.Sink(topic: changelog, producer: producer)
            writer.write(taken)
            let refusal = try #require(writer.waitForAnswer()).failureValue
            #expect(refusal?.message.contains(topic) == true, "\(String(describing: refusal))")
            let reader = try Consumer(
                configuration: ConsumerConfiguration(bootstrapServers: twoBrokers.bootstrapServers, groupId: "reader"),
                subscription: .partitions([TopicPartition(changelog, 0): .beginning]),
                logger: Self.quiet
            )
            defer { reader.close() }
            #expect(try reader.watermarks(of: TopicPartition(changelog, 0)).high == 0)
            #expect(try store.loadDevices().isEmpty)
        }
    }
}
