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

/// The loop's moments, each carried out by the one owner of the input's progress (``Checkpointing``).
///
/// On a manual clock, a real SQLite store, and, where records go out, the mock cluster. What a restart or the
/// partitions' next owner would see is read from the store.
@Suite("The loop's moments, in their order", .timeLimit(.minutes(5)))
final class CheckpointingTests {
    static let quiet = Logger.quiet("test.checkpointing")
    let cluster: MockCluster
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("checkpointing-\(UUID())").path
    let clock = ManualClock()
    let store: StateStore
    let consumer: Consumer
    let lifecycle = PublishedLifecycle(
        backoff: .init(initial: .seconds(1), maximum: .seconds(5)),
        health: WorkerHealth()
    )
    let partition = TopicPartition("positions", 0)
    /// What the "apply threads" changed since the last checkpoint.
    var pending: [DeviceState] = []
    /// What was sent since the last checkpoint.
    var sent: [DeliveryBatch] = []

    init() throws {
        cluster = try MockCluster(brokers: 1, logger: Self.quiet)
        try cluster.createTopic("events", partitions: 1)
        store = try StateStore(directory: directory)
        consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupId: "checkpointing"),
            subscription: .partitions([:]),
            logger: Self.quiet
        )
        _ = lifecycle.report { $0.clientsReady() }
    }

    deinit {
        consumer.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The owner, checkpoints due every second; stored every `storeInterval` (nil: every one).
    func progress(storeInterval: Duration? = nil) throws -> Checkpointing {
        Checkpointing(
            ledger: OffsetLedger(
                topics: .init(positions: "positions", commands: "commands", events: "events"),
                stored: try store.loadOffsets()
            ),
            cycle: CheckpointCycle(interval: .seconds(1), storeInterval: storeInterval, startedAt: clock.now),
            writer: CheckpointWriter(
                store: store,
                durations: Metrics.Timer(label: "checkpoint", factory: NOOPMetricsHandler.instance)
            ),
            metrics: CheckpointMetrics(factory: NOOPMetricsHandler.instance),
            lifecycle: lifecycle,
            clock: clock,
            logger: Self.quiet,
            stateWriteFailures: Counter(label: "failures", factory: NOOPMetricsHandler.instance),
            commitsToGroup: false
        )
    }

    /// The loop's side, as the worker gives it: the test's changes, no changelog, the partition assigned.
    func source() -> Checkpointing.Source {
        Checkpointing.Source(
            waitUntilApplied: {},
            changes: { [self] _ in
                defer { (pending, sent) = ([], []) }
                return [DeviceShard.Changes(deliveries: sent, devices: pending)]
            },
            assigned: [partition],
            changelog: nil,
            membership: { _ in nil },
            transaction: nil,
            holdings: { (0, 0) },
            waitsAbandoned: { false }
        )
    }

    /// A round applied: the device in this country, the partition's messages up to `next` released and applied.
    func apply(_ progress: Checkpointing, country: String, next: Int64, round: Int) {
        pending.append(DeviceState(deviceId: "device-a", country: country))
        progress.noteReleased([partition: next], inRound: round)
        progress.noteApplied(throughRound: round)
    }

    /// A round's turn a second after the last: a checkpoint falls due.
    func turn(_ progress: Checkpointing) -> Bool {
        clock.advance(by: .seconds(1))
        return progress.turn(source, consumer: consumer)
    }

    func storedCountry() throws -> String? { try store.loadDevices().first?.country }

    @Test(
        "an assignment reads the store only once it holds every checkpoint written, the ones the store lagged included"
    )
    func assignmentReadsAStoreUpToDate() throws {
        let progress = try progress(storeInterval: .seconds(10))
        apply(progress, country: "FR", next: 10, round: 1)
        #expect(turn(progress), "a checkpoint falls due: written to the changelog, the store lagging it")
        apply(progress, country: "DE", next: 20, round: 2)
        #expect(!turn(progress), "the writer has the first in hand")
        #expect(progress.readyToReadStore(source))
        #expect(try store.loadOffsets() == [partition: 10], "the checkpoint in hand and the backlog stored first")
        #expect(try storedCountry() == "FR")
        #expect(progress.stored == [partition: 10], "where the assignment starts the partition")
    }

    @Test("a rewind stores what the changelog took first, then goes back to the store and forgets what came after")
    func rewindGoesBackToTheStore() throws {
        let progress = try progress(storeInterval: .seconds(10))
        try progress.assignmentStarts([partition: 0], storing: [:])
        apply(progress, country: "FR", next: 10, round: 1)
        #expect(turn(progress))
        apply(progress, country: "DE", next: 20, round: 2)
        let targets = try progress.rewind(source)
        #expect(targets == [partition: 10], "back to the last checkpoint written, not to what was applied since")
        #expect(try store.loadOffsets() == [partition: 10])
        #expect(try storedCountry() == "FR")
        pending = []
        #expect(turn(progress))
        #expect(try progress.readyToReadStore(source) && store.loadOffsets() == [partition: 10], "nothing after it")
    }

    @Test("a partition with nothing stored goes back to where its assignment started it")
    func rewindToTheAssignmentsStart() throws {
        let progress = try progress()
        try progress.assignmentStarts([partition: 42], storing: [:])
        apply(progress, country: "FR", next: 50, round: 1)
        #expect(try progress.rewind(source) == [partition: 42])
        #expect(try store.loadOffsets().isEmpty)
    }

    @Test("a refused checkpoint: rewind, and nothing more taken until the rewind; then checkpoints go on")
    func refusalUntilRewound() throws {
        let progress = try progress()
        let producer = try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                deliveryTimeout: .seconds(1)
            ),
            logger: Self.quiet
        )
        defer { producer.close() }
        try cluster.takeBrokerDown(1)
        sent = [producer.send([ProducerRecord(topic: "events", key: "device-a", value: "entered")])]
        apply(progress, country: "FR", next: 10, round: 1)
        #expect(turn(progress))
        #expect(progress.readyToReadStore(source), "an assignment reads the store as it stands")
        try cluster.bringBrokerUp(1)
        let answer = progress.takeAnswer()
        guard case .rewind(let reason, _, _) = answer else {
            Issue.record("a refusal rewinds, got \(answer)")
            return
        }
        #expect(reason.code == .delivery)
        apply(progress, country: "DE", next: 20, round: 2)
        #expect(!turn(progress), "nothing is taken while refused")
        #expect(try progress.rewind(source) == [:], "nothing stored, nothing started: left to the reset policy")
        #expect(try store.loadOffsets().isEmpty, "the refused checkpoint never reached the store")
        apply(progress, country: "IT", next: 30, round: 3)
        #expect(turn(progress), "after the rewind, checkpoints are taken again")
        #expect(progress.readyToReadStore(source))
        #expect(try store.loadOffsets() == [partition: 30])
    }

    @Test("a revocation stores what was applied of its partitions before they go; a loss writes nothing")
    func revocationStoresALossDoesNot() throws {
        let progress = try progress(storeInterval: .seconds(10))
        apply(progress, country: "FR", next: 10, round: 1)
        #expect(turn(progress))
        apply(progress, country: "DE", next: 20, round: 2)
        let stored = progress.revoke([partition], isLost: false, source: source, consumer: consumer)
        #expect(stored == [partition: 20], "where the partition's next owner starts")
        #expect(try store.loadOffsets() == [partition: 20])
        #expect(try storedCountry() == "DE")

        apply(progress, country: "IT", next: 30, round: 3)
        let afterLoss = progress.revoke([partition], isLost: true, source: source, consumer: consumer)
        #expect(afterLoss == [partition: 20])
        #expect(try store.loadOffsets() == [partition: 20], "lost: nothing applied since is written")
        #expect(try storedCountry() == "DE")
    }

    @Test("the stop stores its last checkpoint, and nothing is taken after it")
    func stopStoresTheLast() throws {
        let progress = try progress(storeInterval: .seconds(10))
        apply(progress, country: "FR", next: 10, round: 1)
        #expect(turn(progress))
        apply(progress, country: "DE", next: 20, round: 2)
        #expect(progress.stop(source, keepWaiting: { true }) == .consume)
        #expect(try store.loadOffsets() == [partition: 20])
        #expect(try storedCountry() == "DE")
        apply(progress, country: "IT", next: 30, round: 3)
        #expect(!turn(progress), "stopped")
    }
}
