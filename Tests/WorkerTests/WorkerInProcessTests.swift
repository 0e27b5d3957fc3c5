import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import MetricsTestKit
import PartitionOffsets
import StateStore
import Synchronization
import TestSupport
import Testing

@testable import Worker

/// The worker's loop in this process, against a mock cluster on loopback and a state directory on disk, its
/// time on a clock the test moves: what the child-process tests see from outside, here with the worker's
/// own counters, health and store to look at.
@Suite("The worker in process", .timeLimit(.minutes(5)))
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

    /// Positions of `devices` devices in Paris at `timestamp`, keyed by device id, each with its Kafka timestamp.
    func positions(devices: Int, from first: Int = 0, timestamp: Int64 = 1_795_000_000_000) -> [ProducerRecord] {
        (first..<first + devices).map { device in
            ProducerRecord(
                topic: topics.positions,
                key: Array("device-\(device)".utf8),
                value: Array(
                    #"{"deviceId":"device-\#(device)","lat":48.85,"lon":2.35,"timestamp":\#(timestamp),"accuracy":5}"#
                        .utf8
                ),
                timestampMilliseconds: timestamp
            )
        }
    }

    /// How many records the changelog's partitions hold.
    func changelogRecords(on cluster: MockCluster) throws -> Int64 {
        let reader = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupId: "watermarks"),
            subscription: .partitions([:]),
            logger: Self.quiet
        )
        defer { reader.close() }
        let changelog = DeviceChangelog.defaultTopic(groupId: group)
        return try (0..<2).reduce(0) { $0 + (try reader.watermarks(of: TopicPartition(changelog, Int32($1))).high) }
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

    /// Waits until the worker's loop has read `clock` at least `count` more times: its decisions of those turns
    /// (a checkpoint due, a back-off over) are made.
    func loopTurns(_ count: Int, on clock: ManualClock) -> Bool {
        let seen = clock.readings
        return eventually { clock.readings >= seen + count }
    }

    /// A mock cluster with the worker's topics (2 partitions each) and `devices` positions in it.
    func clusterWithPositions(devices: Int) throws -> MockCluster {
        let cluster = try MockCluster(brokers: 1, logger: Self.quiet)
        for topic in [topics.positions, topics.commands, topics.events, topics.deadLetters] {
            try cluster.createTopic(topic, partitions: 2)
        }
        try cluster.createTopic(DeviceChangelog.defaultTopic(groupId: group), partitions: 2)
        try produce(positions(devices: devices), on: cluster)
        return cluster
    }

    func produce(_ records: [ProducerRecord], on cluster: MockCluster) throws {
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: Self.quiet
        )
        defer { producer.close() }
        try #require(producer.send(records).wait().allSatisfy { $0.isDelivered })
    }

    /// A worker on `cluster` whose time is `clock`'s: checkpoints are due only when the test moves it.
    func worker(
        on cluster: MockCluster,
        clock: ManualClock,
        checkpointInterval: Duration = .seconds(3600),
        maxBatch: Int? = nil,
        metrics: any MetricsFactory = NOOPMetricsHandler.instance
    ) throws -> Worker {
        var configuration = WorkerConfiguration(
            brokers: cluster.bootstrapServers,
            topics: topics,
            groupId: group,
            stateDir: directory,
            checkpointInterval: checkpointInterval,
            applyThreadCount: 2,
            kafkaProperties: ["consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "500"]
        )
        if let maxBatch { configuration.maxBatch = maxBatch }
        return try Worker(configuration: configuration, logger: Self.quiet, metricsFactory: metrics, clock: clock)
    }

    /// How a worker's `run()` ended, once it has.
    final class RunOutcome: Sendable {
        private let result = Mutex<Result<Void, WorkerError>?>(nil)

        var hasEnded: Bool { result.withLock { $0 != nil } }

        func get() throws(WorkerError) { try result.withLock { $0 }?.get() }

        fileprivate func end(_ ended: Result<Void, WorkerError>) { result.withLock { $0 = ended } }
    }

    /// Runs `worker` on a thread of its own.
    func start(_ worker: Worker) -> RunOutcome {
        let outcome = RunOutcome()
        Thread { outcome.end(Result { () throws(WorkerError) in try worker.run() }) }.start()
        return outcome
    }

    /// Asks `worker` to stop and waits until its run has returned, without an error.
    func stop(_ worker: Worker, _ outcome: RunOutcome) throws {
        worker.stop()
        #expect(eventually { outcome.hasEnded }, "run returns after a stop")
        try outcome.get()
    }

    /// The ids of the events on the events topic.
    func eventIds(on cluster: MockCluster) throws -> Set<String> {
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupId: "reader"),
            subscription: .partitions([
                TopicPartition(topics.events, 0): .beginning, TopicPartition(topics.events, 1): .beginning,
            ]),
            logger: Self.quiet
        )
        defer { consumer.close() }
        var ids: Set<String> = []
        let deadline = ContinuousClock.now + .seconds(10)
        while !consumer.hasReachedEndOfAssignment && ContinuousClock.now < deadline {
            for record in try consumer.poll(timeout: .milliseconds(100)) {
                let json = record.withValue { Array($0 ?? UnsafeRawBufferPointer(start: nil, count: 0)) }
                if let object = try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any],
                    let id = object["id"] as? String
                {
                    ids.insert(id)
                }
            }
        }
        return ids
    }

    @Test("start, consume, checkpoint when the clock says so, stop: events out, devices and offsets stored")
    func startConsumeCheckpointStop() throws {
        let devices = 20
        let cluster = try clusterWithPositions(devices: devices)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let worker = try worker(on: cluster, clock: clock)
        #expect(worker.health.phase == .starting)
        let outcome = start(worker)

        // Consumed and applied: each device's first position gives it a country.
        #expect(eventually { worker.health.isReady && worker.counters.positions == devices })
        #expect(worker.counters.events["country.changed"] == devices)
        let store = try StateStore(directory: directory)
        #expect(loopTurns(10, on: clock))
        #expect(try store.loadOffsets().isEmpty, "no checkpoint before the clock says one is due")

        clock.advance(by: .seconds(3600))
        let stored = try eventually { try store.loadOffsets().values.reduce(0, +) == Int64(devices) }
        #expect(stored, "the checkpoint stores the next offset of every position read")
        #expect(try store.loadDevices().count == devices)
        #expect(try store.loadChangelogOffsets().values.reduce(0, +) == Int64(devices), "one changelog record each")

        try stop(worker, outcome)
        #expect(worker.health.phase == .stopped)
        #expect(worker.counters.positions == devices, "nothing applied twice")
    }

    @Test(
        "between stored checkpoints a device is logged when it sent an event; a fix alone, and the offsets, wait for the next stored one"
    )
    func fixOnlyChangesWaitForTheStoredCheckpoint() throws {
        let devices = 20
        let cluster = try clusterWithPositions(devices: devices)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let worker = try worker(on: cluster, clock: clock, checkpointInterval: .seconds(1))
        let outcome = start(worker)
        #expect(eventually { worker.health.isReady && worker.counters.positions == devices })
        let store = try StateStore(directory: directory)

        clock.advance(by: .seconds(1))
        let logged = try eventually { try changelogRecords(on: cluster) == Int64(devices) }
        #expect(logged, "each first fix named a country")
        #expect(try store.loadOffsets().isEmpty, "the store lags the changelog (10 s)")

        // The same place a minute later: each device's last fix moves, and nothing else.
        let firstEvents = worker.counters.events
        try produce(positions(devices: devices, timestamp: 1_795_000_060_000), on: cluster)
        #expect(eventually { worker.counters.positions == 2 * devices })
        #expect(worker.counters.events == firstEvents, "no event: the same country, region and time zone")
        clock.advance(by: .seconds(1))
        #expect(loopTurns(20, on: clock))
        #expect(try changelogRecords(on: cluster) == Int64(devices), "a fix alone is not logged between stored ones")

        clock.advance(by: .seconds(10))
        let stored = try eventually { try store.loadOffsets().values.reduce(0, +) == Int64(2 * devices) }
        #expect(stored, "the stored checkpoint covers every position applied")
        #expect(try changelogRecords(on: cluster) == Int64(2 * devices), "and logs every device with its last fix")
        let timestamps = try store.loadDevices().compactMap(\.lastFix?.timestamp)
        #expect(timestamps == Array(repeating: 1_795_000_060_000, count: devices))
        try stop(worker, outcome)
    }

    @Test("a refused delivery: backing off, nothing stored, until the clock ends the back-off; then the same events")
    func refusedDeliveryBacksOffOnTheClock() throws {
        let devices = 20
        let cluster = try clusterWithPositions(devices: devices)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        cluster.refuseNext(1000, .produce, with: .topicAuthorizationFailed)
        let clock = ManualClock()
        let worker = try worker(on: cluster, clock: clock)
        let outcome = start(worker)
        #expect(eventually { worker.counters.positions == devices }, "applied; the events' delivery is refused")

        clock.advance(by: .seconds(3600))
        #expect(eventually { worker.health.phase == .backingOff }, "the checkpoint finds the refusal and rewinds")
        #expect(worker.health.reason?.contains("TOPIC_AUTHORIZATION_FAILED") == true, "\(worker.health.reason ?? "")")
        let store = try StateStore(directory: directory)
        #expect(try store.loadOffsets().isEmpty, "nothing of a refused checkpoint is stored")
        #expect(eventually { clock.hasSleeper }, "the loop waits out its back-off on the clock")
        #expect(worker.health.phase == .backingOff, "the back-off lasts until the clock says it is over")

        cluster.stopRefusing(.produce)
        clock.advance(by: .seconds(1))
        #expect(eventually { worker.health.phase == .running }, "back after the back-off")
        #expect(eventually { worker.counters.positions == 2 * devices }, "applied again from the last checkpoint")
        clock.advance(by: .seconds(3600))
        #expect(try eventually { try store.loadOffsets().values.reduce(0, +) == Int64(devices) })

        try stop(worker, outcome)
        // Applied twice (refused, then again from the checkpoint), each event under the same id both times.
        let produced = worker.counters.events.values.reduce(0, +)
        let ids = try eventIds(on: cluster)
        #expect(worker.counters.events["country.changed"] == 2 * devices)
        #expect(ids.count * 2 == produced, "\(ids.count) ids for \(produced) events produced in two passes")
    }

    @Test(
        "a checkpoint before anything of its partitions is logged still meets the group's check: refused, nothing reaches the changelog"
    )
    func membershipCheckedBeforeAnythingIsLogged() throws {
        let devices = 20
        let cluster = try clusterWithPositions(devices: devices)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        // A new group: the partitions start where the reset policy points, with nothing stored or committed, and the
        // checkpoints before the first stored one (10 s) log their eventful devices and no offset.
        let worker = try worker(on: cluster, clock: clock, checkpointInterval: .seconds(1))
        let outcome = start(worker)
        #expect(eventually { worker.health.isReady && worker.counters.positions == devices })

        // The group has moved on without this member: the coordinator refuses its next commit, the check.
        cluster.refuseNext(1, .offsetCommit, with: .illegalGeneration)
        clock.advance(by: .seconds(1))
        #expect(
            eventually { worker.counters.positions == 2 * devices },
            "the checkpoint is refused and the worker goes back to its store: its input applied again"
        )
        #expect(try changelogRecords(on: cluster) == 0, "nothing of the refused checkpoint reached the changelog")

        // Taken back into the group, the next checkpoint goes through.
        clock.advance(by: .seconds(1))
        #expect(try eventually { try changelogRecords(on: cluster) == Int64(devices) })
        try stop(worker, outcome)
    }

    @Test("every round's duration is recorded once, the rounds a checkpoint finishes included")
    func everyRoundTimed() throws {
        let (warmUp, devices) = (20, 300)
        let cluster = try clusterWithPositions(devices: warmUp)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let metrics = TestMetrics()
        // A poll reads one message, and a checkpoint is due at every turn: it finishes the round in flight.
        let clock = ManualClock()
        let worker = try worker(on: cluster, clock: clock, checkpointInterval: .zero, maxBatch: 1, metrics: metrics)
        let outcome = start(worker)
        #expect(eventually { worker.counters.positions == warmUp })
        // Idle turns, each a checkpoint that finishes and notes the rounds in flight: the warm-up's are all timed.
        #expect(loopTurns(20, on: clock))
        let timer = try metrics.expectTimer(MetricName.batchDuration)
        let timedBefore = timer.values.count
        let roundsBefore = worker.parts.applyThreads.roundsWithMessages
        try produce(positions(devices: devices, from: warmUp), on: cluster)
        #expect(eventually { worker.counters.positions == warmUp + devices })
        try stop(worker, outcome)
        let timed = timer.values.count - timedBefore
        let rounds = worker.parts.applyThreads.roundsWithMessages - roundsBefore
        // Positions polled while the commands' ends are being confirmed go out together: fewer rounds than polls.
        #expect(rounds >= 1 && rounds <= devices, "\(rounds) rounds for \(devices) positions read one per poll")
        #expect(timed == rounds, "each of the \(rounds) rounds timed once: \(timed)")
    }

    @Test("the counters, read while the worker applies, never show a position without the events it gave")
    func countersReadWhileApplying() throws {
        // Each device sends one position, and each first position gives one `country.changed`: whenever the counters
        // are read, both counts must be equal.
        let devices = 5000
        let cluster = try clusterWithPositions(devices: devices)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let worker = try worker(on: cluster, clock: ManualClock())
        let outcome = start(worker)
        var (readings, uneven) = (0, 0)
        while worker.counters.positions < devices && !outcome.hasEnded {
            let counters = worker.counters
            readings += 1
            if counters.positions != counters.events["country.changed", default: 0] { uneven += 1 }
        }
        try stop(worker, outcome)
        #expect(worker.counters.positions == devices)
        #expect(uneven == 0, "\(uneven) of \(readings) readings counted a position without its event")
    }

    @Test(
        "a cancelled stop gives up the checkpoint its broker never delivers, and returns; the store keeps what it had"
    )
    func cancelledStopReturns() throws {
        let devices = 20
        let cluster = try clusterWithPositions(devices: devices)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock()
        let worker = try worker(on: cluster, clock: clock)
        let outcome = start(worker)
        #expect(eventually { worker.counters.positions == devices })
        // The broker goes: the events, and with them the checkpoint, wait for it (a service waits for ever).
        try cluster.takeBrokerDown(1)
        defer { try? cluster.bringBrokerUp(1) }
        clock.advance(by: .seconds(3600))
        #expect(loopTurns(3, on: clock), "the checkpoint is taken and handed to the writer")

        worker.cancel()
        #expect(eventually { outcome.hasEnded }, "run returns without the checkpoint's answer")
        try outcome.get()
        #expect(worker.health.phase == .stopped)
        #expect(try StateStore(directory: directory).loadOffsets().isEmpty, "nothing undelivered is stored")
    }
}
