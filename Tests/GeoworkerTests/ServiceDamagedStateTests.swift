import Foundation
import Kafka
import StateStore
import TestSupport
import Testing
import Worker

/// A state directory whose store was damaged between two runs (a disk that returned garbage, a file cut short, a
/// write-ahead log lost after a crash): with the changelog the next start rebuilds the devices from it and goes on
/// as if nothing happened; without one it refuses to start, naming the file and `--reset-state`.
@Suite("geoworker run: a damaged state store", .timeLimit(.minutes(10)))
struct ServiceDamagedStateTests {
    /// What happened to the store between the two runs.
    enum Damage: String, CaseIterable, CustomStringConvertible {
        case garbage, truncated, missingLog

        var description: String { rawValue }

        /// Damages the store in `directory` (the first run ended by SIGTERM, or for `missingLog` by SIGKILL).
        func apply(to directory: String) throws {
            let file = directory + "/" + StateStore.fileName
            if self != .missingLog {
                // The main file's pages, damaged for sure: a store whose log outlived its writer (SQLite deletes it
                // when the last connection closes, which a loaded run's exit does not always reach) still reads
                // whole from the pages in its log, and is then rightly found healthy.
                for log in [file + "-wal", file + "-shm"] where FileManager.default.fileExists(atPath: log) {
                    try FileManager.default.removeItem(atPath: log)
                }
            }
            switch self {
            case .garbage:
                let size = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
                var generator = SystemRandomNumberGenerator()
                let bytes = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
                try Data(bytes).write(to: URL(fileURLWithPath: file))
            case .truncated:
                let handle = try #require(FileHandle(forUpdatingAtPath: file))
                let size = try handle.seekToEnd()
                try handle.truncate(atOffset: size / 3)
                try handle.close()
            case .missingLog:
                try FileManager.default.removeItem(atPath: file + "-wal")
            }
        }
    }

    static func stateCheck(_ directory: String) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["state", "check", "--state-dir", directory]
        )
    }

    /// The first part of a stream processed and the run ended (SIGTERM, or SIGKILL before a lost log).
    func firstRun(_ bed: ServiceTestBed, _ traffic: BorderTraffic, damage: Damage, extra: [String] = []) async throws {
        let halves = ServiceScaleOutTests.thirds(traffic.positions())
        try await bed.produce(traffic.commands() + halves[0])
        let child = try bed.start(extra)
        let port = try await listeningPort(of: child)
        try await waitUntilConsumed(port, positions: halves[0].count)
        // Every device's state reached the store (and the changelog) before the stop: a checkpoint written after the
        // last position was consumed (the gauge is a wall-clock time, this machine's).
        let consumed = Date().timeIntervalSince1970
        try await waitUntil("a checkpoint after the last position") {
            (try await checkpointUpToDate(port) ?? 0) > consumed
        }
        if damage == .missingLog {
            child.send(SIGKILL)
            #expect(await child.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        } else {
            await ServiceScaleOutTests.stop(child)
        }
        try await bed.produce(halves[1] + halves[2])
    }

    @Test(
        "with the changelog: the damaged store is moved aside and rebuilt; the events of an undamaged run",
        arguments: Damage.allCases
    )
    func rebuiltFromChangelog(damage: Damage) async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 200, positionsPerDevice: 60, topics: bed.topics)
        try await firstRun(bed, traffic, damage: damage)
        try damage.apply(to: bed.stateDir)
        let check = try await Self.stateCheck(bed.stateDir)
        #expect(check.status == 1 && check.output.contains("damaged"), "\(check.output) \(check.errors)")

        let child = try bed.start(["--until-caught-up"])
        let ending = await child.waitForExit(timeout: .seconds(120))
        #expect(ending == .exited(0), "\(child.errors.suffix(3000))")
        let events = try await bed.events()
        let reference = try await bed.referenceEvents()
        ServiceScaleOutTests.expectSameEvents(events, as: reference)
        #expect(child.errors.contains("the state file is damaged"), "\(child.errors.suffix(3000))")
        let kept = try FileManager.default.contentsOfDirectory(atPath: bed.stateDir)
        #expect(kept.contains { $0.hasPrefix(StateStore.fileName + ".damaged-") }, "kept for inspection: \(kept)")
        let after = try await Self.stateCheck(bed.stateDir)
        #expect(after.status == 0 && after.output.contains("healthy"), "\(after.output) \(after.errors)")
    }

    @Test(
        "without the changelog: the start fails naming the file and --reset-state, which then starts empty",
        arguments: Damage.allCases
    )
    func withoutChangelog(damage: Damage) async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 100, positionsPerDevice: 40, topics: bed.topics)
        try await firstRun(bed, traffic, damage: damage, extra: ["--no-changelog"])
        try damage.apply(to: bed.stateDir)

        let refused = try bed.start(["--no-changelog", "--until-caught-up"])
        #expect(await refused.waitForExit(timeout: .seconds(60)) == .exited(1))
        let file = bed.stateDir + "/" + StateStore.fileName
        #expect(
            refused.errors.contains(file) && refused.errors.contains("--reset-state"),
            "\(refused.errors.suffix(2000))"
        )
        #expect(refused.errors.contains("damaged"), "\(refused.errors.suffix(2000))")

        let reset = try bed.start(["--no-changelog", "--until-caught-up", "--reset-state"])
        #expect(await reset.waitForExit(timeout: .seconds(120)) == .exited(0), "\(reset.errors.suffix(3000))")
        let kept = try FileManager.default.contentsOfDirectory(atPath: bed.stateDir)
        #expect(kept.contains { $0.hasPrefix(StateStore.fileName + ".damaged-") }, "kept for inspection: \(kept)")
        let after = try await Self.stateCheck(bed.stateDir)
        #expect(after.status == 0 && after.output.contains("healthy"), "\(after.output) \(after.errors)")
    }
}
