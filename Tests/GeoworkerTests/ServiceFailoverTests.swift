import Foundation
import GeoCore
import Kafka
import TestSupport
import Testing
import Worker

/// One of two `geoworker run` instances killed mid-stream: the survivor takes its partitions with their devices, and
/// the killed one, restarted on its old state, takes some back; the events are those of one uninterrupted run.
///
/// A suite of its own beside ``ServiceScaleOutTests`` (whose helpers it uses) so that the two run side by side.
@Suite("geoworker run: an instance killed, its partitions taken over", .serialized, .timeLimit(.minutes(10)))
struct ServiceFailoverTests {
    @Test("one of two instances killed mid-stream: the survivor takes its partitions with their state")
    func survivorTakesOver() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ServiceScaleOutTests.thirds(traffic.positions())
        try await bed.produce(traffic.commands() + thirds[0])

        let doomed = try bed.start(as: ServiceScaleOutTests.member(bed, "a"))
        let survivor = try bed.start(as: ServiceScaleOutTests.member(bed, "b"))
        defer { survivor.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(doomed, "assigned 4 partitions")
        try await ServiceScaleOutTests.waitForLog(survivor, "assigned 4 partitions")
        // Killed while it applies the second third, once each changelog partition holds a checkpoint of it (under
        // load the members can be slower than the kill); the last third comes after, so its partitions have work
        // left that only the survivor can do, with the devices the dead one knew.
        try await ServiceScaleOutTests.waitForChangelog(bed)
        let before = try await ServiceScaleOutTests.changelogCounts(bed)
        try await bed.produce(thirds[1])
        try await ServiceScaleOutTests.waitForChangelog(bed, beyond: before)
        doomed.send(SIGKILL)
        #expect(await doomed.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        ServiceScaleOutTests.expectNoBrokenInvariant(doomed, "the killed instance")
        try await bed.produce(thirds[2])

        let reference = try await bed.referenceEvents()
        let events = try await ServiceScaleOutTests.waitForAll(bed, reference)
        await ServiceScaleOutTests.stop(survivor)
        ServiceScaleOutTests.expectSameEvents(events, as: reference)
        #expect(ServiceScaleOutTests.restoredRecords(in: survivor.errors) > 0, "\(survivor.errors.suffix(2000))")
    }

    @Test(
        "one of two instances killed mid-stream and restarted on its old state while pins change",
        arguments: TrialSeed.pair(1)
    )
    func killedAndRestarted(_ seed: TrialSeed) async throws {
        var trial = HandoverTrial("killed and restarted", seed: seed)
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ServiceScaleOutTests.thirds(traffic.positions())
        try await bed.produce(traffic.commands() + thirds[0])

        let (a, b) = (ServiceScaleOutTests.member(bed, "a"), ServiceScaleOutTests.member(bed, "b"))
        var doomed = try bed.start(as: a)
        let survivor = try bed.start(as: b)
        defer {
            doomed.send(SIGKILL)
            survivor.send(SIGKILL)
        }
        try await ServiceFencingTests.waitForSettledGroup([doomed, survivor], total: 2 * bed.partitions)
        try await ServiceScaleOutTests.waitForChangelog(bed)
        // Killed somewhere in the second part, pins changing halfway through it; restarted on its own state
        // directory before or after the survivor has taken its partitions.
        let slices = ServiceScaleOutTests.streamWithPinChanges(thirds[1], traffic, count: 20)
        let streaming = Task {
            for slice in slices {
                try await bed.produce(slice)
                try await Task.sleep(for: .milliseconds(150))
            }
        }
        try await Task.sleep(for: trial.duration("kill after", .milliseconds(100)...(.milliseconds(3_500))))
        doomed.send(SIGKILL)
        #expect(await doomed.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        ServiceScaleOutTests.expectNoBrokenInvariant(doomed, "the killed incarnation")
        let killed = doomed
        try await Task.sleep(for: trial.duration("restart after", .milliseconds(200)...(.seconds(10))))
        doomed = try bed.start(as: a)
        try await streaming.value
        try await ServiceFencingTests.waitForSettledGroup([doomed, survivor], total: 2 * bed.partitions)
        try await bed.produce(thirds[2])

        let reference = try await bed.referenceEvents()
        let events = try await ServiceScaleOutTests.waitForAll(bed, reference)
        await ServiceScaleOutTests.stop(survivor)
        await ServiceScaleOutTests.stop(doomed)
        // The three incarnations' own words, read only on a failure: who held which partition when, what each restored.
        ServiceScaleOutTests.expectSameEvents(
            events,
            as: reference,
            logs: "killed:\n\(killed.errors.suffix(6000))\nrestarted:\n\(doomed.errors.suffix(8000))\n"
                + "survivor:\n\(survivor.errors.suffix(8000))"
        )
    }
}
