import Foundation
import GeoCore
import Kafka
import TestSupport
import Testing
import Worker

/// One of two instances away (killed, stopped past its session, or stopped with SIGTERM) while the other applies pin
/// changes and the positions after them, then back with its old store (or its old memory) and its partitions: what it
/// applies next must start from the other's states, never from its own.
///
/// The order is forced, not left to a kill's timing: the other holds every partition and has emitted every event of
/// the second part before the first comes back. A returning instance that applies the third part to its own stale
/// states announces the untracked `customer` pins again (entered, exited), which a single instance never does.
@Suite(
    "geoworker run: an instance back with an old state after the other changed pins",
    .serialized,
    .timeLimit(.minutes(10))
)
struct ServiceReturnTests {
    typealias ScaleOut = ServiceScaleOutTests
    typealias Fencing = ServiceFencingTests

    /// How the first instance is taken away, and on which broker.
    enum Absence: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// SIGKILL on the mock, restarted on its old state directory.
        case killed
        /// SIGSTOP past its session on the mock, resumed with SIGCONT (its memory as it was).
        case paused
        /// SIGSTOP past its session on the mock, resumed only once the other has applied the third part too: what it
        /// fetches first after SIGCONT is stamped after the untracks.
        case pausedThroughTheEnd
        /// SIGTERM on noida-db (which never expires a killed member's session: a graceful leave hands the partitions
        /// over), restarted on its old state directory.
        case stopped

        var testDescription: String {
            switch self {
            case .killed: "killed with SIGKILL on the mock, restarted"
            case .paused: "stopped past its session on the mock, resumed"
            case .pausedThroughTheEnd: "stopped past its session on the mock, resumed after the third part"
            case .stopped: "stopped with SIGTERM on noida-db, restarted"
            }
        }
    }

    @Test(
        "an instance back with its old state after the other applied untracks and later positions: no event for an untracked pin",
        arguments: Absence.allCases
    )
    func backAfterPinChanges(_ absence: Absence) async throws {
        let bed = try ServiceTestBed(on: try await TestBroker.start(absence == .stopped ? .noida : .mock))
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ScaleOut.thirds(traffic.positions())
        let (a, b) = (ScaleOut.member(bed, "a"), ScaleOut.member(bed, "b"))
        var first = try bed.start(as: a)
        let other = try await Self.afterTheFirstPart(bed, traffic, thirds[0], first: first, other: b)
        defer {
            first.send(SIGCONT)
            first.send(SIGKILL)
            other.send(SIGKILL)
        }

        switch absence {
        case .killed:
            first.send(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
            ScaleOut.expectNoBrokenInvariant(first, "the killed incarnation")
        case .paused, .pausedThroughTheEnd:
            first.send(SIGSTOP)
        case .stopped:
            await ScaleOut.stop(first)
        }
        // The other takes every partition (after the session, for the killed and the paused one), restoring the first
        // one's devices from the changelog.
        try await Fencing.waitForSettledGroup([other], total: 2 * bed.partitions)

        // The second part, with pins changing before it: every third device untracks the customer pin it would reach
        // in the third part; the next tracks a pin it reaches in the second; the third swaps its customer pin for one
        // further on, untrack and track in a row. All of it applied by the other alone.
        try await bed.produce(traffic.pinChanges(atStep: 50) + traffic.pinSwaps(atStep: 50))
        try await bed.produce(thirds[1])
        _ = try await ScaleOut.waitForAll(bed, try await bed.referenceEvents(named: "reference-2"))

        // Back with the state it had: its old store, or its memory; it takes half of the partitions again.
        switch absence {
        case .killed, .stopped: first = try bed.start(as: a)
        case .paused: first.send(SIGCONT)
        case .pausedThroughTheEnd:
            try await bed.produce(thirds[2])
            _ = try await ScaleOut.waitForAll(bed, try await bed.referenceEvents(named: "reference-3"))
            first.send(SIGCONT)
        }
        try await Fencing.waitForSettledGroup([first, other], total: 2 * bed.partitions)
        if absence != .pausedThroughTheEnd { try await bed.produce(thirds[2]) }

        try await Self.expectOneInstancesEvents(bed, returned: first, other: other)
    }

    /// The reporter's shape (issue 62), with the order left to the fetches rather than forced.
    ///
    /// Six partitions, the worker's own checkpoint interval, the second part produced a seeded moment after the first
    /// instance is taken away (before or after the other takes its partitions), the third as soon as it is back. The other meets the pin changes live on its own partitions
    /// and in a catch-up on the taken ones; the returning one meets the third part at once.
    @Test(
        "pin changes produced while an instance is taken away and the third part as it comes back: no event for an untracked pin",
        arguments: [Absence.killed, .paused].flatMap { absence in
            TrialSeed.pair(absence == .killed ? 62 : 63).map { (absence, $0) }
        }
    )
    func backAfterPinChangesProducedAtOnce(_ absence: Absence, _ seed: TrialSeed) async throws {
        var trial = HandoverTrial("back after pin changes produced at once, \(absence)", seed: seed)
        let awayFor = trial.duration(
            "second part after the absence began",
            .zero...(.milliseconds(9_000)),
            usual: .zero
        )
        let bed = try ServiceTestBed(partitions: 6)
        let traffic = BorderTraffic(devices: 400, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ScaleOut.thirds(traffic.positions())
        let (a, b) = (ScaleOut.member(bed, "a"), ScaleOut.member(bed, "b"))
        // As the report ran them: the worker's own checkpoint interval and apply threads.
        let defaults: Set<String> = ["--checkpoint-interval-ms", "--apply-threads"]
        var first = try bed.start(as: a, omitting: defaults)
        let other = try await Self.afterTheFirstPart(
            bed,
            traffic,
            thirds[0],
            first: first,
            other: b,
            omitting: defaults
        )
        defer {
            first.send(SIGCONT)
            first.send(SIGKILL)
            other.send(SIGKILL)
        }

        if absence == .killed {
            first.send(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
            ScaleOut.expectNoBrokenInvariant(first, "the killed incarnation")
        } else {
            first.send(SIGSTOP)
        }
        try await Task.sleep(for: awayFor)
        try await bed.produce(traffic.pinChanges(atStep: 50) + traffic.pinSwaps(atStep: 50) + thirds[1])
        try await Fencing.waitForSettledGroup([other], total: 2 * bed.partitions)
        _ = try await ScaleOut.waitForAll(bed, try await bed.referenceEvents(named: "reference-2"))

        if absence == .killed { first = try bed.start(as: a, omitting: defaults) } else { first.send(SIGCONT) }
        try await bed.produce(thirds[2])
        try await Fencing.waitForSettledGroup([first, other], total: 2 * bed.partitions)

        try await Self.expectOneInstancesEvents(bed, returned: first, other: other)
    }

    /// The other applies the pin changes and the second part live while the commands partitions' leader is slow to
    /// answer fetches; the first comes back with its old state.
    ///
    /// The second part's positions reach the other at once, the pin changes produced before them a slow fetch later.
    /// Then the first comes back with its old state (restarted on its store after a kill, or resumed
    /// with its memory after a pause past its session), and the third part follows.
    ///
    /// The order is decided by the brokers, not left to a kill's moment: a commands side read to its end, whose next
    /// fetch (holding the pin changes) is still on its way when positions stamped after them arrive. The leader's other
    /// answers come at once, so the brokers' answer to where the commands partitions end (issue 62's end confirmation)
    /// already shows them. Before that confirmation the merge trusted the old end and applied those positions first:
    /// the new pins were decided late or never announced, and the untracked ones still met the positions (every run on
    /// f05f369). Until only the brokers' answer confirmed an end, the end-of-partition event of the other's first,
    /// delayed fetch of the commands it had just taken over, answered before the pin changes were produced, let the
    /// positions polled before it go ahead (the swapped pins' events lost in 3 of 17 runs of the paused case).
    @Test(
        "the other applies pin changes whose fetch comes seconds behind the positions stamped after them; the first back with its old state: a single instance's events",
        arguments: [Absence.killed, .paused]
    )
    func backAfterPinChangesFetchedLate(_ absence: Absence) async throws {
        let bed = try ServiceTestBed(brokers: 2)
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        // Everything on broker 1 but the commands partitions, led by broker 2, whose fetches the second part slows.
        for partition in 0..<Int32(bed.partitions) {
            for topic in [bed.topics.positions, bed.topics.events, changelog] {
                try bed.cluster.setLeader(of: topic, partition: partition, to: 1)
            }
            try bed.cluster.setLeader(of: bed.topics.commands, partition: partition, to: 2)
        }
        try bed.cluster.setLeader(of: bed.topics.deadLetters, partition: 0, to: 1)
        try bed.cluster.setCoordinator(ofGroup: bed.group, to: 1)
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ScaleOut.thirds(traffic.positions())
        let (a, b) = (ScaleOut.member(bed, "a"), ScaleOut.member(bed, "b"))
        var first = try bed.start(as: a)
        let other = try await Self.afterTheFirstPart(bed, traffic, thirds[0], first: first, other: b)
        defer {
            first.send(SIGCONT)
            first.send(SIGKILL)
            other.send(SIGKILL)
        }
        if absence == .killed {
            first.send(SIGKILL)
            #expect(await first.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        } else {
            first.send(SIGSTOP)
        }
        try await Fencing.waitForSettledGroup([other], total: 2 * bed.partitions)

        // The next fetches broker 2 receives (the other's, of the commands) are answered 3 s late, each with what the
        // partitions held when it came: the pin changes reach the other at least 3 s after they are produced, the
        // positions produced after them within the positions' next fetch.
        try bed.cluster.delayNext(3, .fetch, of: 2, by: .seconds(3))
        try await bed.produce(traffic.pinChanges(atStep: 50) + traffic.pinSwaps(atStep: 50))
        try await bed.produce(thirds[1])
        _ = try await ScaleOut.waitForAll(bed, try await bed.referenceEvents(named: "reference-2"))

        if absence == .killed { first = try bed.start(as: a) } else { first.send(SIGCONT) }
        try await Fencing.waitForSettledGroup([first, other], total: 2 * bed.partitions)
        try await bed.produce(thirds[2])
        try await Self.expectOneInstancesEvents(bed, returned: first, other: other)
    }

    /// Produces the commands and the first part, lets `first` take every partition (so that its store may hold states
    /// of whichever partitions it gets back later, older than the other's), starts `other`, and returns it once the
    /// two hold half each and have emitted the first part's events.
    static func afterTheFirstPart(
        _ bed: ServiceTestBed,
        _ traffic: BorderTraffic,
        _ firstPart: [ProducerRecord],
        first: BackgroundProcess,
        other: ServiceTestBed.Instance,
        omitting: Set<String> = []
    ) async throws -> BackgroundProcess {
        try await bed.produce(traffic.commands() + firstPart)
        try await Fencing.waitForSettledGroup([first], total: 2 * bed.partitions)
        let started = try bed.start(as: other, omitting: omitting)
        try await Fencing.waitForSettledGroup([first, started], total: 2 * bed.partitions)
        _ = try await ScaleOut.waitForAll(bed, try await bed.referenceEvents(named: "reference-1"))
        return started
    }

    /// Once the third part is in: the deduplicated events are a single instance's, by id and content.
    static func expectOneInstancesEvents(
        _ bed: ServiceTestBed,
        returned: BackgroundProcess,
        other: BackgroundProcess
    ) async throws {
        let reference = try await bed.referenceEvents()
        let events = try await ScaleOut.waitForAll(bed, reference)
        await ScaleOut.stop(other)
        await ScaleOut.stop(returned)
        ScaleOut.expectSameEvents(
            events,
            as: reference,
            logs: "returned:\n\(returned.errors.suffix(4000))\nother:\n\(other.errors.suffix(4000))"
        )
    }
}
