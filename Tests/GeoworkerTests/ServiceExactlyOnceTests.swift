import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// `--processing-guarantee exactly-once` on noida-db, the test broker that writes transaction markers: whatever happens
/// to the worker, a `read_committed` reader of the events topic (the bed's reader) sees each event of a clean run once.
@Suite("exactly-once on noida-db", .timeLimit(.minutes(10)))
struct ServiceExactlyOnceTests {
    static let exactlyOnce = ["--processing-guarantee", "exactly-once"]

    @Test("kill -9 at random moments, restarted each time with its instance id and state: every event exactly once")
    func killedAndRestarted() async throws {
        let bed = try await ServiceRealBrokerTests.bed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 120, topics: bed.topics)
        let positions = traffic.positions()
        let parts = 5
        let slices = (0..<parts).map { part in
            Array(positions[(positions.count * part / parts)..<(positions.count * (part + 1) / parts)])
        }
        try await bed.produce(traffic.commands())
        let member = ServiceScaleOutTests.member(bed, "a")
        var generator = SystemRandomNumberGenerator()
        for slice in slices {
            let worker = try bed.start(Self.exactlyOnce + ["--group-instance-id", "a"], as: member)
            defer { worker.send(SIGKILL) }
            try await ServiceScaleOutTests.waitForLog(worker, "geoworker running")
            try await bed.produce(slice)
            // Somewhere in the slice's processing, or in a checkpoint's transaction.
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...1_500, using: &generator)))
            worker.send(SIGKILL)
            _ = await worker.waitForExit(timeout: .seconds(10))
        }
        let last = try bed.start(Self.exactlyOnce + ["--group-instance-id", "a"], as: member)
        defer { last.send(SIGKILL) }
        let reference = try await bed.referenceEvents()
        let events = try await ServiceScaleOutTests.waitForAll(bed, reference)
        await ServiceScaleOutTests.stop(last)
        Self.expectExactlyOnce(events, as: reference)
    }

    /// Every event of `reference` once in `events`, with the same content, and nothing else.
    static func expectExactlyOnce(_ events: [ServiceTestBed.Event], as reference: [ServiceTestBed.Event]) {
        ServiceScaleOutTests.expectSameEvents(events, as: reference)
        let twice = Dictionary(grouping: events, by: \.id).filter { $0.value.count > 1 }
        #expect(
            twice.isEmpty,
            "\(twice.count) of \(reference.count) events seen more than once: \(twice.keys.sorted().prefix(5))"
        )
    }
}
