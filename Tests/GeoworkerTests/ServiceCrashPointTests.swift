import Foundation
import TestSupport
import Testing
import Worker

/// A worker killed between two steps of a checkpoint or of a restore, then started again on its state, once or more.
///
/// The kill is the worker's own SIGKILL at a moment it names (`GEOWORKER_CRASH_AT`, ``CrashPoint``), so every run
/// tries the same moment. A reader of the events sees what a clean run gives, each event once under exactly-once.
/// On noida-db, which writes transaction markers.
@Suite("killed between a checkpoint's steps and restarted, on noida-db", .timeLimit(.minutes(10)))
struct ServiceCrashPointTests {
    /// Where one incarnation ends.
    enum Ending: CustomStringConvertible, Sendable {
        /// Killed by itself the `count`-th time it comes to `point`.
        case crash(CrashPoint, Int)
        /// Killed by the test once its part of the input is produced.
        case killed

        var description: String {
            switch self {
            case .crash(let point, let count): "\(point.rawValue) #\(count)"
            case .killed: "kill -9"
            }
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let guarantee: String
        /// How each incarnation but the last ends, in turn.
        let endings: [Ending]
        /// How long the store may lag the changelog: long enough for a restore's moment to find records to restore
        /// whenever the worker was killed; 0 (every checkpoint stored) for a store's moment to come at every one.
        let storeIntervalMs: Int
        /// The incarnation whose share of the input begins with the devices' `track` commands (0: they come before
        /// any position): a later one's first checkpoint carries the pins, which a restore that misses it loses, and
        /// with them every geofence event after.
        ///
        /// They are in the topic before that incarnation starts: stamped
        /// before every position, a command that comes after positions were applied is applied then (the merge reads
        /// an empty side to its end, it does not wait for it), and the events of those positions would differ from a
        /// clean run's by the test's timing.
        let commandsWith: Int

        init(_ guarantee: String, _ endings: [Ending], storeIntervalMs: Int = 1500, commandsWith: Int = 0) {
            self.guarantee = guarantee
            self.endings = endings
            self.storeIntervalMs = storeIntervalMs
            self.commandsWith = commandsWith
        }

        var testDescription: String {
            "\(guarantee), store interval \(storeIntervalMs) ms: "
                + endings.map(\.description).joined(separator: ", then ")
                + (commandsWith > 0 ? " (pins tracked by incarnation \(commandsWith + 1))" : "")
        }
    }

    static let cases: [Case] =
        ["exactly-once", "at-least-once"].flatMap { guarantee in
            [
                Case(guarantee, [.crash(.changelogDelivered, 3)]),
                Case(guarantee, [.crash(.checkpointStored, 2)], storeIntervalMs: 0),
                Case(guarantee, [.killed, .crash(.changelogRestored, 1)], storeIntervalMs: 600_000),
                Case(
                    guarantee,
                    [.killed, .crash(.changelogRestored, 1), .crash(.changelogDelivered, 2)],
                    storeIntervalMs: 600_000
                ),
            ]
        } + [
            Case("exactly-once", [.crash(.transactionCommitted, 3)]),
            Case("exactly-once", [.crash(.transactionCommitted, 3), .crash(.transactionCommitted, 2)]),
            Case("at-least-once", [.crash(.checkpointStored, 2), .crash(.changelogDelivered, 2)], storeIntervalMs: 0),
            // Issue 62's lost events: the first incarnation's transaction aborted, the second's restore reads past its
            // marker, the third commits the pins, the last restores from past the marker. A read_committed fetch
            // that starts past an aborted transaction's marker on noida-db skips the same producer's later records:
            // the pins' records gone, the geofence events after them lost (ChangelogRestore.transactional).
            Case(
                "exactly-once",
                [.crash(.changelogDelivered, 1), .crash(.changelogRestored, 1), .crash(.changelogDelivered, 2)],
                storeIntervalMs: 600_000,
                commandsWith: 2
            ),
        ]

    @Test(
        "killed at the moment, restarted on its state: a clean run's events, once under exactly-once",
        arguments: cases
    )
    func killedAtTheMoment(_ trial: Case) async throws {
        let bed = try await ServiceRealBrokerTests.bed()
        let traffic = BorderTraffic(devices: 200, positionsPerDevice: 60, topics: bed.topics)
        let positions = traffic.positions()
        let options = [
            "--processing-guarantee", trial.guarantee, "--group-instance-id", "a",
            // Several checkpoints while an incarnation's part is produced.
            "--checkpoint-interval-ms", "200", "--store-interval-ms", "\(trial.storeIntervalMs)",
        ]
        let member = ServiceScaleOutTests.member(bed, "a")
        // Two thirds of the input for the incarnations that end, each its share; the last third for the last.
        let ending = positions.count * 2 / 3
        // The last third's positions not yet produced: an incarnation that has not reached its moment when its share
        // is in gets more of them, so that its end does not depend on how many checkpoints its share happened to take.
        var spare = ending
        var incarnations: [BackgroundProcess] = []
        defer { for incarnation in incarnations { incarnation.send(SIGKILL) } }
        for (index, end) in trial.endings.enumerated() {
            if index == trial.commandsWith { try await bed.produce(traffic.commands()) }
            var environment: [String: String] = [:]
            if case .crash(let point, let count) = end {
                environment["GEOWORKER_CRASH_AT"] = "\(point.rawValue):\(count)"
            }
            let incarnation = try bed.start(options, as: member, environment: environment)
            incarnations.append(incarnation)
            if case .crash(.changelogRestored, _) = end {
                // The restore comes before the worker says it runs.
                try await Self.expectKilledItself(incarnation, end)
                continue
            }
            try await ServiceScaleOutTests.waitForLog(incarnation, "geoworker running")
            // Its share in four pieces a little apart, so that it takes several checkpoints.
            let share = Array(
                positions[ending * index / trial.endings.count..<ending * (index + 1) / trial.endings.count]
            )
            for piece in 0..<4 {
                try await bed.produce(Array(share[share.count * piece / 4..<share.count * (piece + 1) / 4]))
                try await Task.sleep(for: .milliseconds(300))
            }
            if case .killed = end {
                incarnation.send(SIGKILL)
                _ = await incarnation.waitForExit(timeout: .seconds(10))
            } else {
                var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(300))
                while incarnation.isRunning, spare < positions.count, budget.allowsAnotherLook() {
                    let more = min(positions.count, spare + 300)
                    try await bed.produce(Array(positions[spare..<more]))
                    spare = more
                    try await Task.sleep(for: .milliseconds(300))
                }
                try await Self.expectKilledItself(incarnation, end)
            }
        }
        let last = try bed.start(options, as: member)
        defer { last.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(last, "geoworker running")
        if spare < positions.count { try await bed.produce(Array(positions[spare...])) }
        if trial.guarantee == "exactly-once" {
            try await ServiceExactlyOnceTests.expectEveryEventOnce(bed, stopping: [last], earlier: incarnations)
        } else {
            let reference = try await bed.referenceEvents()
            _ = try await ServiceScaleOutTests.waitForAll(bed, reference)
            await ServiceScaleOutTests.stop(last)
            ServiceScaleOutTests.expectSameEvents(
                try await bed.events(),
                as: reference,
                logs: incarnations.map(\.errors).joined(separator: "\n")
            )
        }
    }

    /// Expects `incarnation` to end by its own SIGKILL at `end`'s moment, within a minute.
    private static func expectKilledItself(_ incarnation: BackgroundProcess, _ end: Ending) async throws {
        let ending = await incarnation.waitForExit(timeout: .seconds(60))
        try #require(
            ending == .signalled(SIGKILL),
            """
            the worker did not end at \(end) (\(String(describing: ending))): \
            \(incarnation.errors.suffix(3000))
            """
        )
    }
}
