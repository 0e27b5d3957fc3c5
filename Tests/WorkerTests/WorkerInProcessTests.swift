import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import StateStore
import Synchronization
import TestSupport
import Testing

@testable import Worker

/// The worker's loop in this process, against a mock cluster on loopback and a state directory on disk, its
/// time on a clock the test moves: what the child-process tests see from outside, here with the worker's
/// own counters, health and store to look at.
@Suite("The worker in process")
struct WorkerInProcessTests {
    static let quiet = Logger.quiet("test.worker")
    let topics = WorkerConfiguration.Topics(
        positions: "positions",
        commands: "commands",
        events: "events",
        deadLetters: "dead-letters"
    )
    let group = "in-process"
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("worker-\(UUID())").path

    /// Positions of `devices` devices in Paris, keyed by device id, each with its Kafka timestamp.
    func positions(devices: Int) -> [ProducerRecord] {
        (0..<devices).map { device in
            ProducerRecord(
                topic: topics.positions,
                key: Array("device-\(device)".utf8),
                value: Array(
                    #"{"deviceId":"device-\#(device)","lat":48.85,"lon":2.35,"timestamp":1795000000000,"accuracy":5}"#
                        .utf8
                ),
                timestampMilliseconds: 1_795_000_000_000
            )
        }
    }

    /// Waits up to 30 s for `condition`, checking every 20 ms.
    func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return try condition()
    }

    @Test("start, consume, checkpoint when the clock says so, stop: events out, devices and offsets stored")
    func startConsumeCheckpointStop() throws {
        let cluster = try MockCluster(brokers: 1, logger: Self.quiet)
        for topic in [topics.positions, topics.commands, topics.events, topics.deadLetters] {
            try cluster.createTopic(topic, partitions: 2)
        }
        try cluster.createTopic(DeviceChangelog.defaultTopic(groupID: group), partitions: 2)
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: Self.quiet
        )
        defer { producer.close() }
        let devices = 20
        try #require(producer.send(positions(devices: devices)).wait().allSatisfy { $0.isDelivered })
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let clock = ManualClock()
        let worker = try Worker(
            configuration: WorkerConfiguration(
                brokers: cluster.bootstrapServers,
                topics: topics,
                groupID: group,
                stateDirectory: directory,
                checkpointInterval: .seconds(3600),
                applyThreads: 2,
                kafkaProperties: ["consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "500"]
            ),
            logger: Self.quiet,
            metricsFactory: NOOPMetricsHandler.instance,
            clock: clock
        )
        #expect(worker.health.phase == .starting)
        let outcome = Mutex<Result<Void, WorkerError>?>(nil)
        Thread { outcome.withLock { $0 = Result { () throws(WorkerError) in try worker.run() } } }.start()

        // Consumed and applied: each device's first position gives it a country.
        #expect(eventually { worker.health.isReady && worker.counters.positions == devices })
        #expect(worker.counters.events["country.changed"] == devices)
        let store = try StateStore(directory: directory)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try store.loadOffsets().isEmpty, "no checkpoint before the clock says one is due")

        clock.advance(by: .seconds(3600))
        let stored = try eventually { try store.loadOffsets().values.reduce(0, +) == Int64(devices) }
        #expect(stored, "the checkpoint stores the next offset of every position read")
        #expect(try store.loadDevices().count == devices)
        #expect(try store.loadChangelogOffsets().values.reduce(0, +) == Int64(devices), "one changelog record each")

        worker.stop()
        #expect(eventually { outcome.withLock { $0 != nil } }, "run returns after a stop")
        try outcome.withLock { $0 }?.get()
        #expect(worker.health.phase == .stopped)
        #expect(worker.counters.positions == devices, "nothing applied twice")
    }
}
