import Foundation
import GeoCore
import Kafka
import TestSupport
import Testing
import Worker

/// Several `geoworker run` processes in one consumer group on the mock cluster, each with its own state directory:
/// partitions move between them (an instance killed, one added, a rolling restart) and their devices move with them
/// through the changelog topic.
///
/// Whatever happens, the deduplicated events of the whole run are those of one uninterrupted single-instance run, by id
/// and content.
@Suite(
    "geoworker run: several instances in one group share the work and the state",
    .serialized,
    .timeLimit(.minutes(10))
)
struct ServiceScaleOutTests {
    /// An instance of the bed's group with a state directory of its own.
    static func member(_ bed: ServiceTestBed, _ name: String) -> ServiceTestBed.Instance {
        ServiceTestBed.Instance(
            events: bed.topics.events,
            stateDir: bed.stateDir + "-" + name,
            group: bed.group
        )
    }

    /// Waits until the events topic holds `count` events (at most two minutes).
    static func waitForEvents(_ bed: ServiceTestBed, atLeast count: Int64) async throws {
        var budget = WaitBudget(.seconds(120), lookingEvery: .milliseconds(20))
        while try await bed.messageCount(bed.topics.events, partitions: bed.partitions) < count,
            budget.allowsAnotherLook()
        {
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until every reference event id has been emitted (at most two minutes, and no longer than 45 s without a
    /// new event), then returns the events.
    ///
    /// Events that will never come (the run under test lost them) end the wait once the topic stops growing, so the
    /// test fails on its expectations with the members' logs, not on the suite's time limit with nothing to read.
    static func waitForAll(
        _ bed: ServiceTestBed,
        _ reference: [ServiceTestBed.Event]
    ) async throws -> [ServiceTestBed.Event] {
        let expected = Set(reference.map(\.id))
        var budget = WaitBudget(.seconds(120), lookingEvery: .milliseconds(500))
        var quiet = WaitBudget(.seconds(45), lookingEvery: .milliseconds(500))
        var seen = 0
        while true {
            let events = try await bed.events()
            if expected.isSubset(of: Set(events.map(\.id))) || !budget.allowsAnotherLook() { return events }
            if events.count > seen {
                seen = events.count
                quiet = WaitBudget(.seconds(45), lookingEvery: .milliseconds(500))
            } else if !quiet.allowsAnotherLook() {
                return events
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The run's events, deduplicated by id, equal the reference run's: every id, the same content, nothing
    /// else; an id emitted twice carries identical bytes.
    ///
    /// `logs`, read only on a failure, goes with its message.
    static func expectSameEvents(
        _ events: [ServiceTestBed.Event],
        as reference: [ServiceTestBed.Event],
        logs: @autoclosure () -> String = ""
    ) {
        let byID = Dictionary(grouping: events, by: \.id)
        let referenceByID = Dictionary(uniqueKeysWithValues: reference.map { ($0.id, $0.json) })
        let missing = Set(reference.map(\.id)).subtracting(byID.keys)
        let extra = Set(byID.keys).subtracting(reference.map(\.id))
        #expect(
            missing.isEmpty,
            """
            \(missing.count) events of the single-instance run missing: \(missing.sorted().prefix(5))
            \(missing.sorted().prefix(5).compactMap { referenceByID[$0] }.joined(separator: "\n"))
            \(logs())
            """
        )
        #expect(
            extra.isEmpty,
            """
            \(extra.count) events a single-instance run does not emit: \(extra.sorted().prefix(5))
            \(extra.sorted().prefix(5).compactMap { byID[$0]?.first?.json }.joined(separator: "\n"))
            \(logs())
            """
        )
        let differing = byID.filter { Set($0.value.map(\.json)).count > 1 }
        #expect(differing.isEmpty, "one id, two different events: \(differing.prefix(2))")
        let changed = byID.filter { id, copies in referenceByID[id].map { $0 != copies[0].json } ?? false }
        #expect(changed.isEmpty, "\(changed.count) events differ from the single-instance run: \(changed.prefix(2))")
    }

    /// Stops a member with SIGTERM and expects a clean exit, with no invariant broken on the way.
    static func stop(_ child: BackgroundProcess) async {
        child.send(SIGTERM)
        let ending = await child.waitForExit(timeout: .seconds(60))
        expectNoBrokenInvariant(child, "a member stopped with SIGTERM")
        // A crash's reason and its thread's frames come before the registers and images, which fill the log's tail.
        let lines = child.errors.split(separator: "\n")
        let crash = lines.firstIndex { $0.contains("Fatal error") || $0.contains("Program crashed") } ?? lines.endIndex
        let reason = lines[crash...].prefix(40).joined(separator: "\n")
        #expect(ending == .exited(0), "\(reason)\n\(child.errors.suffix(2000))")
    }

    /// Expects no line of a member's log (a killed one's too, which ``stop(_:)`` never sees) to say an invariant broke.
    static func expectNoBrokenInvariant(_ child: BackgroundProcess, _ who: String) {
        let broken = child.errors.split(separator: "\n").filter { $0.contains("invariant broken") }
        #expect(broken.isEmpty, "\(who): \(broken.prefix(5).joined(separator: "\n"))")
    }

    /// Waits until every changelog partition holds more records than `counts` (none: any): each instance has
    /// checkpointed its devices since.
    static func waitForChangelog(_ bed: ServiceTestBed, beyond counts: [Int64]? = nil) async throws {
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(50))
        for partition in 0..<Int32(bed.partitions) {
            let floor = counts?[Int(partition)] ?? 0
            while try await bed.messageCount(changelog, partition: partition) <= floor, budget.allowsAnotherLook() {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// How many records each changelog partition holds.
    static func changelogCounts(_ bed: ServiceTestBed) async throws -> [Int64] {
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        var counts: [Int64] = []
        for partition in 0..<Int32(bed.partitions) {
            counts.append(try await bed.messageCount(changelog, partition: partition))
        }
        return counts
    }

    /// `positions` as a stream of `count` slices in time order, with the traffic's pin changes in the middle: the
    /// slices before hold only positions stamped before the changes, the slices after only positions stamped after,
    /// so that every instance reads a change before any position it precedes, as a single instance does.
    static func streamWithPinChanges(
        _ positions: [ProducerRecord],
        _ traffic: BorderTraffic,
        count: Int
    ) -> [[ProducerRecord]] {
        let steps = positions.map { Int(($0.timestampMilliseconds! - BorderTraffic.start) / 10_000) }
        let middle = (steps.min()! + steps.max()!) / 2
        let before = zip(positions, steps).filter { $0.1 < middle }.map(\.0)
        let after = zip(positions, steps).filter { $0.1 >= middle }.map(\.0)
        return ServiceFencingTests.slices(before, count: count / 2) + [traffic.pinChanges(atStep: middle)]
            + ServiceFencingTests.slices(after, count: count - count / 2)
    }

    /// Positions split by time into three parts (every device has positions in each).
    static func thirds(_ positions: [ProducerRecord]) -> [[ProducerRecord]] {
        let times = positions.map { $0.timestampMilliseconds! }
        let (first, last) = (times.min()!, times.max()!)
        let span = (last - first) / 3 + 1
        var parts: [[ProducerRecord]] = [[], [], []]
        for position in positions { parts[Int((position.timestampMilliseconds! - first) / span)].append(position) }
        return parts
    }

    @Test("an instance that joins mid-stream gets partitions with their devices", arguments: TrialSeed.pair(3))
    func joinerGetsState(_ seed: TrialSeed) async throws {
        var trial = HandoverTrial("joiner", seed: seed)
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 100, topics: bed.topics)
        let positions = traffic.positions()
        let middle = BorderTraffic.start + 500_000
        try await bed.produce(traffic.commands() + positions.filter { $0.timestampMilliseconds! < middle })

        let first = try bed.start(as: Self.member(bed, "a"))
        defer { first.send(SIGKILL) }
        try await Self.waitForLog(first, "assigned 8 partitions")
        try await Task.sleep(for: trial.duration("join after", .zero...(.seconds(2)), usual: .zero))
        let joiner = try bed.start(as: Self.member(bed, "b"))
        defer { joiner.send(SIGKILL) }
        // Pins change as the joiner joins, before the positions stamped after the change.
        try await Task.sleep(for: trial.duration("pins change after", .zero...(.seconds(3)), usual: .seconds(1)))
        try await bed.produce(traffic.pinChanges(atStep: 50))
        // The joiner's store is empty: whatever it is assigned, it restores before it reads.
        try await Self.waitForLog(joiner, "restored partition")
        try await bed.produce(positions.filter { $0.timestampMilliseconds! >= middle })

        let reference = try await bed.referenceEvents()
        let events = try await Self.waitForAll(bed, reference)
        await Self.stop(joiner)
        await Self.stop(first)
        Self.expectSameEvents(events, as: reference)
        #expect(Self.restoredRecords(in: joiner.errors) > 0, "\(joiner.errors.suffix(2000))")
    }

    /// Waits until a member's log has a line matching `pattern` (a regular expression; at most a minute).
    static func waitForLog(_ child: BackgroundProcess, _ pattern: String) async throws {
        let expression = try Regex(pattern)
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(100))
        while child.errors.firstMatch(of: expression) == nil, budget.allowsAnotherLook() {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(child.errors.firstMatch(of: expression) != nil, "no \(pattern) in \(child.errors.suffix(2000))")
    }

    @Test("an instance restarted on a stale store restores only what changed meanwhile, then processes")
    func staleStoreRestoresOnlyChanges() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 200, positionsPerDevice: 60, topics: bed.topics)
        let steps = traffic.positionsPerDevice
        func positions(devices: Range<Int>, steps range: Range<Int>) -> [ProducerRecord] {
            devices.flatMap { device in range.map { traffic.position(device, step: $0) } }
        }
        let a = Self.member(bed, "a")
        let b = Self.member(bed, "b")
        // A processes everything of the first third; B, alone, the second third of 20 devices only; A again
        // the rest. A's store is then behind by B's records for those 20 devices, and nothing else.
        try await bed.produce(traffic.commands() + positions(devices: 0..<200, steps: 0..<steps / 3))
        try await bed.runUntilCaughtUp(as: a)
        try await bed.produce(positions(devices: 0..<20, steps: steps / 3..<2 * steps / 3))
        try await bed.runUntilCaughtUp(as: b)
        let changelogBefore = try await bed.messageCount(
            DeviceChangelog.defaultTopic(groupId: bed.group),
            partitions: bed.partitions
        )
        try await bed.produce(
            positions(devices: 20..<200, steps: steps / 3..<steps)
                + positions(devices: 0..<20, steps: 2 * steps / 3..<steps)
        )
        let last = try bed.start(["--until-caught-up"], as: a)
        #expect(await last.waitForExit(timeout: .seconds(120)) == .exited(0), "\(last.errors.suffix(2000))")

        let restored = Self.restoredRecords(in: last.errors)
        #expect(restored > 0, "A restores B's records: \(last.errors.suffix(2000))")
        #expect(
            restored <= 20 * 10,
            "only the records B wrote for its 20 devices, not the whole changelog (\(changelogBefore))"
        )
        #expect(Int64(restored) < changelogBefore)
        let reference = try await bed.referenceEvents()
        Self.expectSameEvents(try await bed.events(), as: reference)
    }

    @Test(
        "a rolling restart of three instances, one at a time, while input keeps coming and pins change",
        arguments: TrialSeed.pair(4)
    )
    func rollingRestart(_ seed: TrialSeed) async throws {
        var trial = HandoverTrial("rolling restart", seed: seed)
        let bed = try ServiceTestBed(partitions: 6)
        let traffic = BorderTraffic(devices: 240, positionsPerDevice: 120, topics: bed.topics)
        let waves = 4
        let perWave = traffic.positionsPerDevice / waves
        func wave(_ index: Int) -> [ProducerRecord] {
            (0..<traffic.devices).flatMap { device in
                (index * perWave..<(index + 1) * perWave).map { traffic.position(device, step: $0) }
            }
        }
        try await bed.produce(traffic.commands() + wave(0))
        let names = ["a", "b", "c"]
        var members = try names.map { try bed.start(as: Self.member(bed, $0)) }
        defer { for member in members { member.send(SIGKILL) } }
        for member in members { try await Self.waitForLog(member, "assigned 4 partitions") }
        // Each instance in turn: stopped, input arrives while the other two hold its partitions, started
        // again on its own state directory and given partitions back.
        for index in members.indices {
            await Self.stop(members[index])
            try await Task.sleep(for: trial.duration("input after", .zero...(.seconds(3)), usual: .seconds(2)))
            // Before the third wave, stamped before its positions: pins change while an instance is away.
            if index == 1 { try await bed.produce(traffic.pinChanges(atStep: 2 * perWave)) }
            try await bed.produce(wave(index + 1))
            try await Task.sleep(for: trial.duration("restart after", .zero...(.seconds(3)), usual: .seconds(2)))
            members[index] = try bed.start(as: Self.member(bed, names[index]))
            try await Self.waitForLog(members[index], "assigned 4 partitions")
        }
        let reference = try await bed.referenceEvents()
        let events = try await Self.waitForAll(bed, reference)
        for member in members { await Self.stop(member) }
        Self.expectSameEvents(events, as: reference)
    }

    @Test("a changelog record that cannot be decoded stops the worker with its partition and offset")
    func undecodableRecord() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 4, positionsPerDevice: 5, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        var newer = DeviceStateEncoding.encode(DeviceState(deviceId: "device-1"))
        newer[0] = DeviceStateEncoding.version + 1
        try await bed.produce([
            ProducerRecord(topic: changelog, partition: 2, key: Array("device-1".utf8), value: newer)
        ])

        let child = try bed.start(["--until-caught-up"])
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(1))
        #expect(
            child.errors.contains("changelog record \(changelog)[2]@0 (device device-1) cannot be restored"),
            "\(child.errors.suffix(2000))"
        )
        #expect(child.errors.contains("newer geoworker"))
        #expect(try await bed.messageCount(bed.topics.events, partitions: bed.partitions) == 0, "nothing was processed")
    }

    @Test(
        "a missing changelog the cluster does not create, or one not co-partitioned: a start-up error saying what to do"
    )
    func changelogTopicChecked() async throws {
        let bed = try ServiceTestBed()
        let missing = try bed.start(["--changelog-topic", "no-such-changelog"])
        #expect(await missing.waitForExit(timeout: .seconds(60)) == .exited(1))
        #expect(
            missing.errors.contains(
                "--create --topic no-such-changelog --partitions 4 --replication-factor <replicas> --config cleanup.policy=compact"
            ),
            "\(missing.errors.suffix(2000))"
        )
        // Refused before joining the group: a member that cannot run takes no partitions from those that can.
        #expect(!missing.errors.contains("Partitions assigned"), "\(missing.errors.suffix(2000))")

        let skewed = "changelog-3-\(UUID().uuidString.prefix(6))"
        try bed.cluster.createTopic(skewed, partitions: 3)
        let child = try bed.start(["--changelog-topic", skewed])
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(1))
        #expect(child.errors.contains("the changelog topic \(skewed) has 3 partitions"), "\(child.errors.suffix(2000))")
        #expect(!child.errors.contains("Partitions assigned"), "\(child.errors.suffix(2000))")
    }

    /// The records restored, summed over a process's "restored partition" log lines.
    static func restoredRecords(in log: String) -> Int {
        log.split(separator: "\n").filter { $0.contains("restored partition") }.reduce(0) { total, line in
            guard let range = line.range(of: "records=") else { return total }
            return total + Int(line[range.upperBound...].prefix { $0.isNumber })!
        }
    }
}
