import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing
import Worker

/// `--processing-guarantee exactly-once` on noida-db, the test broker that writes transaction markers: whatever happens
/// to the worker, a `read_committed` reader of the events topic (the bed's reader) sees each event of a clean run once.
@Suite("exactly-once, on noida-db and the mock", .timeLimit(.minutes(10)))
struct ServiceExactlyOnceTests {
    static let exactlyOnce = ["--processing-guarantee", "exactly-once"]

    @Test(
        "kill -9 at random moments, restarted each time with its instance id and state: every event exactly once",
        arguments: TrialSeed.pair(5)
    )
    func killedAndRestarted(_ seed: TrialSeed) async throws {
        let bed = try await ServiceRealBrokerTests.bed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let positions = traffic.positions()
        let parts = 5
        let slices = (0..<parts).map { part in
            Array(positions[(positions.count * part / parts)..<(positions.count * (part + 1) / parts)])
        }
        try await bed.produce(traffic.commands())
        // The kill moments from a printed seed (tools/handover-trials.sh gives each run its own), so that a run that
        // loses events can be repeated.
        var trial = HandoverTrial("exactly-once, killed and restarted", seed: seed)
        var killed: [BackgroundProcess] = []
        for slice in slices {
            let worker = try Self.start("a", on: bed)
            defer { worker.send(SIGKILL) }
            killed.append(worker)
            try await ServiceScaleOutTests.waitForLog(worker, "geoworker running")
            try await bed.produce(slice)
            // Somewhere in the slice's processing, or in a checkpoint's transaction.
            try await Task.sleep(for: trial.duration("kill after", .milliseconds(50)...(.milliseconds(1_500))))
            worker.send(SIGKILL)
            _ = await worker.waitForExit(timeout: .seconds(10))
        }
        let last = try Self.start("a", on: bed)
        defer { last.send(SIGKILL) }
        try await Self.expectEveryEventOnce(bed, stopping: [last], earlier: killed)
    }

    @Test("scale out: a second instance joins mid-stream and takes half the partitions: every event exactly once")
    func scaleOut() async throws {
        let bed = try await ServiceRealBrokerTests.bed()
        let traffic = BorderTraffic(devices: 200, positionsPerDevice: 90, topics: bed.topics)
        let thirds = ServiceScaleOutTests.thirds(traffic.positions())
        try await bed.produce(traffic.commands() + thirds[0])
        let first = try Self.start("a", on: bed)
        defer { first.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(first, "assigned 8 partitions")

        let joiner = try Self.start("b", on: bed)
        defer { joiner.send(SIGKILL) }
        try await bed.produce(thirds[1])
        try await ServiceScaleOutTests.waitForLog(joiner, "restored partition")
        try await bed.produce(thirds[2])
        try await Self.expectEveryEventOnce(bed, stopping: [joiner, first])
    }

    /// On the mock, whose sessions expire.
    ///
    /// A static member that leaves keeps its partitions until its session times out (static members send no
    /// LeaveGroup), and noida-db never expires one. The mock writes no transaction markers, so its readers see aborted
    /// records too; the instances log where the records of each transaction they aborted landed (a rewind's, or the
    /// last checkpoint of a stop that met the rebalance), and the events are read as a `read_committed` reader of a
    /// real broker reads them: without those, every event once.
    @Test("scale in: one of two instances stops with SIGTERM, the other takes its partitions: every event once")
    func scaleIn() async throws {
        let bed = try await ServiceRealBrokerTests.bed(on: .mock)
        let traffic = BorderTraffic(devices: 200, positionsPerDevice: 90, topics: bed.topics)
        let thirds = ServiceScaleOutTests.thirds(traffic.positions())
        try await bed.produce(traffic.commands() + thirds[0])
        let first = try Self.start("a", on: bed)
        defer { first.send(SIGKILL) }
        let second = try Self.start("b", on: bed)
        defer { second.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(second, "assigned [1-9]")
        try await bed.produce(thirds[1])
        await ServiceScaleOutTests.stop(second)
        try await ServiceScaleOutTests.waitForLog(first, "assigned 8 partitions")
        try await bed.produce(thirds[2])
        let reference = try await bed.referenceEvents()
        _ = try await ServiceScaleOutTests.waitForAll(bed, reference)
        await ServiceScaleOutTests.stop(first)
        let logs = "a:\n\(first.errors.suffix(3000))\nb:\n\(second.errors.suffix(3000))"
        Self.expectExactlyOnce(
            try await Self.committedEvents(bed, abortedBy: [first, second]),
            as: reference,
            logs: logs
        )
    }

    /// The events topic's events as a `read_committed` reader of a broker that writes transaction markers reads them:
    /// without the records of the transactions `instances` logged as aborted.
    static func committedEvents(
        _ bed: ServiceTestBed,
        abortedBy instances: [BackgroundProcess]
    ) async throws -> [ServiceTestBed.Event] {
        let aborted = abortedRecords(in: instances.map(\.errors)).filter { $0.key.topic == bed.topics.events }
        print("read as committed: the records of \(aborted.count) aborted spans of the events topic left out")
        return try await bed.readAll(bed.topics.events, partitions: bed.partitions).filter { message in
            !aborted.contains { $0.key.partition == message.partition && $0.value.contains(message.offset) }
        }
        .map(ServiceTestBed.Event.init)
    }

    /// Where the records of the transactions the instances aborted landed, from their "aborted the open transaction"
    /// lines (`topic[partition]@first..<next`).
    static func abortedRecords(in logs: [String]) -> [(key: TopicPartition, value: Range<Int64>)] {
        let span = /([^\s,=]+)\[(\d+)\]@(\d+)\.\.<(\d+)/
        return logs.flatMap { $0.split(separator: "\n") }.filter { $0.contains("aborted the open transaction") }
            .flatMap { line in
                line.matches(of: span).map { match in
                    (TopicPartition(String(match.1), Int32(match.2)!), Int64(match.3)!..<Int64(match.4)!)
                }
            }
    }

    @Test("the Kafka service stopped with a transaction open and started 15 s later: aborted, applied again, once")
    func kafkaStoppedMidTransaction() async throws {
        let bed = try await ServiceRealBrokerTests.bed()
        guard case .noida(let broker) = bed.broker else { preconditionFailure("a noida-db bed") }
        let traffic = BorderTraffic(devices: 40, positionsPerDevice: 40, topics: bed.topics)
        let positions = traffic.positions()
        let half = positions.count / 2
        try await bed.produce(traffic.commands() + positions.prefix(half))
        // Checkpoints 5 s apart: the first half's events wait in an open transaction when the service stops.
        let worker = try Self.start("a", on: bed, ["--checkpoint-interval-ms", "5000"])
        defer { worker.send(SIGKILL) }
        try await waitUntilConsumed(try await listeningPort(of: worker), positions: half)
        try await broker.stopKafka()
        try await Task.sleep(for: .seconds(15))
        #expect(worker.isRunning, "an outage is waited out: \(worker.errors.suffix(2000))")
        try await broker.startKafka()
        try await bed.produce(Array(positions.suffix(from: half)))
        try await Self.expectEveryEventOnce(bed, stopping: [worker])
    }

    @Test("a broker without transactions: the start is refused, naming the setting; a start without an instance id too")
    func brokerWithoutTransactions() async throws {
        let bed = try await ServiceRealBrokerTests.bed(on: .mock)
        guard case .mock(let cluster) = bed.broker else { preconditionFailure("a mock bed") }
        cluster.withdraw([.initProducerId, .addPartitionsToTxn, .addOffsetsToTxn, .endTxn, .txnOffsetCommit])
        let refused = try bed.start(Self.exactlyOnce + ["--group-instance-id", "a"])
        let ending = await refused.waitForExit(timeout: .seconds(60))
        #expect(ending != nil && ending != .exited(0), "\(refused.errors.suffix(2000))")
        #expect(refused.errors.contains("processingGuarantee exactly-once"), "\(refused.errors.suffix(2000))")

        let anonymous = try bed.start(Self.exactlyOnce)
        #expect(await anonymous.waitForExit(timeout: .seconds(30)) != .exited(0))
        #expect(anonymous.errors.contains("needs groupInstanceId"), "\(anonymous.errors.suffix(2000))")
    }

    /// Starts the instance `name` under exactly-once: its instance id and a state directory of its own.
    static func start(_ name: String, on bed: ServiceTestBed, _ extra: [String] = []) throws -> BackgroundProcess {
        try bed.start(exactlyOnce + ["--group-instance-id", name] + extra, as: ServiceScaleOutTests.member(bed, name))
    }

    /// Waits for a clean run's events, stops `instances` with SIGTERM and expects each of those events once.
    ///
    /// The events are read after the stop, whose last checkpoint commits the transaction still open: an event committed
    /// late under load is not lost. How many came only with the stop is printed.
    ///
    /// - Parameters:
    ///   - bed: the test bed.
    ///   - instances: the instances running, stopped once the events are in.
    ///   - earlier: instances that ran before and were killed: a failure shows their logs too, since the state a
    ///     late incarnation started from is theirs.
    /// - Throws: when the events cannot be read.
    static func expectEveryEventOnce(
        _ bed: ServiceTestBed,
        stopping instances: [BackgroundProcess],
        earlier: [BackgroundProcess] = []
    ) async throws {
        let reference = try await bed.referenceEvents()
        let waited = ContinuousClock.now
        let beforeStop = try await ServiceScaleOutTests.waitForAll(bed, reference)
        let waitedFor = ContinuousClock.now - waited
        for instance in instances { await ServiceScaleOutTests.stop(instance) }
        let events = try await bed.events()
        let missingBeforeStop = Set(reference.map(\.id)).subtracting(beforeStop.map(\.id))
        let late = missingBeforeStop.intersection(events.map(\.id))
        if !late.isEmpty {
            // Under load: a committed event is what counts, however late; the figure says how late it was.
            print("\(late.count) events committed only by the stop, after \(waitedFor) of waiting for them")
        }
        // The instances' own words, read only on a failure: a run that lost events says where it stood.
        expectExactlyOnce(
            events,
            as: reference,
            logs: "waited \(waitedFor) for the events before the stop; \(late.count) came only with it\n"
                + earlier.enumerated().map { "incarnation \($0.offset + 1), killed:\n" + $0.element.errors }
                .joined(separator: "\n")
                + instances.map { "an instance's last log lines:\n" + String($0.errors.suffix(6000)) }
                .joined(separator: "\n")
        )
    }

    /// Every event of `reference` once in `events`, with the same content, and nothing else.
    static func expectExactlyOnce(
        _ events: [ServiceTestBed.Event],
        as reference: [ServiceTestBed.Event],
        logs: @autoclosure () -> String = ""
    ) {
        ServiceScaleOutTests.expectSameEvents(events, as: reference, logs: logs())
        let twice = Dictionary(grouping: events, by: \.id).filter { $0.value.count > 1 }
        #expect(
            twice.isEmpty,
            "\(twice.count) of \(reference.count) events seen more than once: \(twice.keys.sorted().prefix(5))\n\(logs())"
        )
    }
}
