import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// A state directory on a disk that really fills up: a 256 KB tmpfs, mounted for the test (the build machine's
/// tests run as root), made larger when "space returns".
@Suite("geoworker run: a full disk", .serialized, .timeLimit(.minutes(10)))
struct ServiceDiskTests {
    /// Runs a command, returning its exit status.
    func run(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test("the state directory fills up: unhealthy naming the cause, nothing lost; when space returns it goes on")
    func fullDisk() async throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("full-disk-\(UUID())").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try #require(
            try run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint]) == 0,
            "mounting a small tmpfs (needs root)"
        )
        defer { _ = try? run(["umount", "-l", mountPoint]) }

        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 100, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands())
        let child = try bed.start(
            ["--state-dir", mountPoint + "/state"],
            omitting: ["--state-dir"],
            // The store written every 2 s rather than every 10 (it lags the changelog): the disk fills within the
            // traffic's 9 s, and what it refuses is a write with a backlog.
            environment: ["GEOWORKER_DELIVERY_RETRY_INITIAL_BACKOFF_MS": "100", "GEOWORKER_STORE_INTERVAL_MS": "2000"]
        )
        let port = try await listeningPort(of: child)
        try await waitUntil("ready") { try await get(port, "ready").status == 200 || !child.isRunning }

        // Positions keep coming, step by step, until the checkpoints no longer fit.
        var health = HTTPAnswer(status: 200, contentType: nil, body: "")
        var step = 0
        while health.status == 200 && step < traffic.positionsPerDevice && child.isRunning {
            try await bed.produce((0..<traffic.devices).map { traffic.position($0, step: step) })
            step += 1
            try await Task.sleep(for: .milliseconds(300))
            health = try await get(port, "health")
        }
        #expect(child.isRunning, "a full disk does not end the process: \(child.errors.suffix(2000))")
        #expect(health.status == 503, "unhealthy while the disk is full")
        #expect(health.body.contains("disk is full"), "\(health.body)")
        let metrics = try await get(port, "metrics").body
        #expect(metrics.contains("geoworker_state_write_failures_total"), "counted")

        #expect(try run(["mount", "-o", "remount,size=64m", mountPoint]) == 0, "space returns")
        if step < traffic.positionsPerDevice {
            try await bed.produce(
                (step..<traffic.positionsPerDevice).flatMap { step in
                    (0..<traffic.devices).map { traffic.position($0, step: step) }
                }
            )
        }
        let reference = try await bed.referenceEvents()
        try await waitUntil("every event delivered, healthy again", timeout: .seconds(120)) {
            guard try await bed.distinctEvents().count >= reference.count else { return !child.isRunning }
            return try await get(port, "health").status == 200 || !child.isRunning
        }
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0), "\(child.errors.suffix(2000))")
        let firstCopies = try await bed.distinctEvents()
        #expect(Set(firstCopies.map(\.json)) == Set(reference.map(\.json)), "nothing lost, nothing changed")
        #expect(child.errors.contains("cannot write the state; rewinding to the last checkpoint"))
    }
}
