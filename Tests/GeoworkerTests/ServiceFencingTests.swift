import Foundation
import GeoCore
import Kafka
import TestSupport
import Testing
import Worker

/// An instance stalled past its session (SIGSTOP: a paused VM, a throttled CPU, a long fsync) while the others take its
/// partitions, then resumed (SIGCONT) still believing it holds them: nothing it had in hand may change what comes out.
///
/// The deduplicated events of the whole run equal one uninterrupted single-instance run's, by id and content.
@Suite("geoworker run: an instance stalled past its session is fenced", .serialized, .timeLimit(.minutes(10)))
struct ServiceFencingTests {
    typealias ScaleOut = ServiceScaleOutTests

    /// The log line of an assignment taken, followed by its partition count.
    static let assigned = "[Worker] assigned"
    /// The log line of a revocation, followed by its partition count.
    static let revoking = "[Worker] revoking"

    /// How many lines of a member's log contain `text`.
    static func lines(_ child: BackgroundProcess, _ text: String) -> Int {
        child.errors.split(separator: "\n").filter { $0.contains(text) }.count
    }

    /// Waits until a member's log has at least `count` lines containing `text` (at most a minute).
    static func waitForLines(_ child: BackgroundProcess, _ text: String, count: Int) async throws {
        func lines() -> Int { Self.lines(child, text) }
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(100))
        while lines() < count, budget.allowsAnotherLook() { try await Task.sleep(for: .milliseconds(100)) }
        #expect(lines() >= count, "fewer than \(count) lines with \(text) in \(child.errors.suffix(3000))")
    }

    /// How many input partitions a member holds now, by its log: each assignment adds its count, each revocation
    /// takes its count away.
    static func heldPartitions(_ child: BackgroundProcess) -> Int {
        func count(in line: Substring, after marker: String) -> Int? {
            line.range(of: marker + " ").flatMap { Int(line[$0.upperBound...].prefix(while: \.isNumber)) }
        }
        var held = 0
        for line in child.errors.split(separator: "\n") {
            if let assigned = count(in: line, after: Self.assigned) {
                held += assigned
            } else if let revoked = count(in: line, after: Self.revoking) {
                held -= revoked
            }
        }
        return held
    }

    /// Waits (at most a minute) until the group has settled: every member holds partitions, and together they hold
    /// all `total` of both input topics.
    ///
    /// Each member's first assignment is not enough: members join one after another, each join revokes and assigns
    /// everything again, and under load a member stopped in between held nothing, had nothing to lose, and never met
    /// the fencing this suite is about.
    static func waitForSettledGroup(_ members: [BackgroundProcess], total: Int) async throws {
        func settled(_ held: [Int]) -> Bool { held.allSatisfy { $0 > 0 } && held.reduce(0, +) == total }
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(100))
        while !settled(members.map(heldPartitions)), budget.allowsAnotherLook() {
            try await Task.sleep(for: .milliseconds(100))
        }
        let held = members.map(heldPartitions)
        #expect(settled(held), "the group did not settle: members hold \(held) of \(total) partitions")
    }

    /// Runs `members` instances on three parts of a stream and compares their events with a single instance's.
    ///
    /// The first part comes before they start; the second while they run, one of them stopped `stopAfter` into it
    /// and resumed once the others have taken its partitions and had time to catch up; the third after it resumed.
    /// `arguments` gives each member's own (by its name). Returns the stalled member's log.
    @discardableResult
    func stallOne(
        of members: Int,
        stopAfter usualStop: Duration,
        readingCommitted: Bool = false,
        arguments: (String) -> [String] = { _ in [] }
    ) async throws -> String {
        var trial = HandoverTrial(
            "\(members) instances, one stalled",
            seed: .one(UInt64(usualStop / .milliseconds(1)))
        )
        let stopAfter = trial.duration("stop after", .milliseconds(100)...(.milliseconds(3_000)), usual: usualStop)
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ScaleOut.thirds(traffic.positions())
        try await bed.produce(traffic.commands() + thirds[0])

        let names = ["a", "b", "c"].prefix(members)
        let instances = try names.map { try bed.start(arguments($0), as: ScaleOut.member(bed, $0)) }
        defer { for instance in instances { instance.send(SIGKILL) } }
        try await Self.waitForSettledGroup(instances, total: 2 * bed.partitions)
        try await ScaleOut.waitForChangelog(bed)
        let (stalled, others) = (instances[0], instances.dropFirst())

        // The second part as a stream (a slice every 150 ms), the stop in the middle of it: the stalled instance has
        // messages in hand, applied and not yet checkpointed, and the stream goes on without it. Halfway, pins
        // change.
        let slices = ScaleOut.streamWithPinChanges(thirds[1], traffic, count: 20)
        let streaming = Task {
            for slice in slices {
                try await bed.produce(slice)
                try await Task.sleep(for: .milliseconds(150))
            }
        }
        try await Task.sleep(for: stopAfter)
        // Counted before the stop: under load the stream's slices can outlast the session, and the others may
        // have taken the stalled member's partitions before the stream ends.
        let assignments = others.map { Self.lines($0, Self.assigned) }
        #expect(Self.heldPartitions(stalled) > 0, "stopped holding nothing: \(stalled.errors.suffix(2000))")
        stalled.send(SIGSTOP)
        try await streaming.value
        // The others notice the missing member after the session (6 s), take its partitions, restore their
        // devices from the changelog and catch up on the second part.
        for (other, before) in zip(others, assignments) {
            try await Self.waitForLines(other, Self.assigned, count: before + 1)
        }
        try await Task.sleep(for: trial.duration("resume after", .zero...(.seconds(5)), usual: .seconds(4)))
        let resumed = ContinuousClock.now
        stalled.send(SIGCONT)
        // Back, it meets the loss (a rebalance, or the group's refusal before its next changelog write).
        try await Self.waitForLines(stalled, "other member", count: 1)
        print("the stalled member logged its loss \(ContinuousClock.now - resumed) after SIGCONT (polled every 100 ms)")
        try await bed.produce(thirds[2])

        let reference = try await bed.referenceEvents()
        let events = try await ScaleOut.waitForAll(bed, reference)
        for instance in instances { await ScaleOut.stop(instance) }
        let logs = zip(names, instances).map { "\($0):\n\($1.errors.suffix(3000))" }.joined(separator: "\n")
        ScaleOut.expectSameEvents(events, as: reference, logs: logs)
        if readingCommitted {
            // As a read_committed reader of a broker that writes transaction markers sees them: each event once.
            let committed = try await ServiceExactlyOnceTests.committedEvents(bed, abortedBy: instances)
            ServiceExactlyOnceTests.expectExactlyOnce(committed, as: reference, logs: logs)
        }
        return stalled.errors
    }

    /// `records` in `count` slices of about equal size, in order.
    static func slices(_ records: [ProducerRecord], count: Int) -> [[ProducerRecord]] {
        let size = (records.count + count - 1) / count
        return stride(from: 0, to: records.count, by: size).map { Array(records[$0..<min($0 + size, records.count)]) }
    }

    @Test(
        "two instances, one stopped past its session mid-stream and resumed after the other caught up: one instance's events",
        arguments: [500, 1_400, 2_300]
    )
    func twoInstances(stopAfterMilliseconds: Int) async throws {
        try await stallOne(of: 2, stopAfter: .milliseconds(stopAfterMilliseconds))
    }

    /// What refuses the stalled member here is the worker's own check.
    ///
    /// The mock's coordinator takes transactional offsets of an old generation (it reads the generation and ignores
    /// it). The mock writes no transaction markers:
    /// what the events topic shows is what any reader sees, aborted transactions included; read without what the
    /// instances logged as aborted, as a `read_committed` reader of a real broker reads it, each event is there once.
    @Test("exactly-once: one of two static members stopped past its session is refused by the worker's own fence")
    func stalledUnderExactlyOnce() async throws {
        let log = try await stallOne(of: 2, stopAfter: .milliseconds(1_400), readingCommitted: true) {
            ["--processing-guarantee", "exactly-once", "--group-instance-id", $0]
        }
        #expect(log.contains("the worker's own fence"), "\(log.suffix(3000))")
    }

    @Test("three instances, one stopped past its session mid-stream and resumed: one instance's events")
    func threeInstances() async throws {
        try await stallOne(of: 3, stopAfter: .milliseconds(2_000))
    }
}
