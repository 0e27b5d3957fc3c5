import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// `geoworker run` as a child process against the mock cluster: stopped and restarted, killed and restarted.
@Suite("geoworker run: restarts lose nothing and announce nothing twice", .serialized, .timeLimit(.minutes(10)))
struct ServiceRestartTests {
    @Test(
        "a restart mid-stream on the same state directory, with another apply thread count, continues where the first run stopped"
    )
    func restartMidStream() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 40, positionsPerDevice: 30, topics: bed.topics)
        let positions = traffic.positions()
        let firstHalf = positions.filter { $0.timestampMilliseconds! < BorderTraffic.start + 150_000 }
        let secondHalf = positions.filter { $0.timestampMilliseconds! >= BorderTraffic.start + 150_000 }
        try await bed.produce(firstHalf + traffic.commands())
        try await bed.runUntilCaughtUp()
        let afterFirstRun = try await bed.events()
        #expect(!afterFirstRun.isEmpty)

        try await bed.produce(secondHalf)
        // On two apply threads rather than three: each stored device must reach the shard its messages now go
        // to, or it would be announced again as new.
        try await bed.runUntilCaughtUp(["--apply-threads", "2"], omitting: ["--apply-threads"])
        let events = try await bed.events()
        let reference = try await bed.referenceEvents()

        #expect(Set(events.map(\.id)).count == events.count, "a restart after a clean stop re-announces nothing")
        #expect(Set(events.map(\.json)) == Set(reference.map(\.json)), "the same events as one uninterrupted run")
        // Every device crossed FR -> DE and entered then left both pins: the scenario did happen.
        let types = Dictionary(grouping: events, by: \.type).mapValues(\.count)
        #expect(types["country.changed"] == 2 * traffic.devices)
        #expect(types["geofence.entered"] == 2 * traffic.devices)
        #expect(types["geofence.exited"] == 2 * traffic.devices)
        #expect(
            events.allSatisfy {
                $0.key == $0.subject && $0.contentType == "application/cloudevents+json; charset=UTF-8"
            }
        )
    }

    @Test("killed with SIGKILL at several points and restarted until caught up: the events of a clean run")
    func killedAndRestarted() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 200, topics: bed.topics)
        try await bed.produce(traffic.positions() + traffic.commands())
        let reference = try await bed.referenceEvents()
        let total = Int64(reference.count)

        var kills = 0
        for fraction in [0.2, 0.5, 0.8] {
            let child = try bed.start()
            // Kill once the events topic holds this fraction of the reference run's events.
            var budget = WaitBudget(.seconds(120), lookingEvery: .milliseconds(20))
            while child.isRunning, budget.allowsAnotherLook(),
                try await bed.messageCount(bed.topics.events, partitions: bed.partitions)
                    < Int64(Double(total) * fraction)
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            child.send(SIGKILL)
            if await child.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL) { kills += 1 }
        }
        try await bed.runUntilCaughtUp()
        let events = try await bed.events()

        #expect(kills == 3, "each run was killed mid-stream")
        let byID = Dictionary(grouping: events, by: \.id)
        #expect(Set(byID.keys) == Set(reference.map(\.id)), "every event of a clean run, and no other")
        let differing = byID.filter { Set($0.value.map(\.json)).count > 1 }
        #expect(differing.isEmpty, "a re-emitted event is identical to the first emission: \(differing.prefix(2))")
        #expect(Set(events.map(\.json)) == Set(reference.map(\.json)))
    }
}
