import Foundation
import GeoCore
import PartitionOffsets
import StateStore
import TestSupport
import Testing

@Suite("Crash consistency", .timeLimit(.minutes(10)))
struct CrashConsistencyTests {
    /// The helper executable, built beside the test bundle (see Sources/state-store-crash-writer).
    static var writerPath: String {
        let tests =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: tests).deletingLastPathComponent().appendingPathComponent(
            "state-store-crash-writer"
        ).path
    }

    @Test("a writer killed with SIGKILL mid-batch leaves a store that opens and holds one whole batch")
    func killedMidBatch() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let key = TopicPartition("positions", 0)
        var lastBatch: Int64 = -1
        // Kill at 30 different moments; each run resumes from what the previous one left.
        var random = SplitMix64(seed: 11)
        for _ in 0..<30 {
            let delay = 20 + random.next(below: 120)
            let writer = Process()
            writer.executableURL = URL(fileURLWithPath: Self.writerPath)
            writer.arguments = [directory]
            writer.standardOutput = FileHandle.nullDevice
            try writer.run()
            try await Task.sleep(for: .milliseconds(delay))
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            #expect(writer.terminationReason == .uncaughtSignal, "the writer must have been killed, not have exited")

            let store = try StateStore(directory: directory)
            let devices = try store.loadDevices()
            guard let offset = try store.loadOffsets()[key] else {
                #expect(devices.isEmpty, "devices without progress: a batch was torn")
                continue
            }
            let batch = offset / 100 - 1
            #expect(offset % 100 == 0)
            #expect(devices.count == 100)
            // Every device from the batch the offset belongs to: none from the one before or after.
            let stamps = Set(devices.map { $0.lastFix!.timestamp - 1_795_000_000_000 })
            #expect(stamps == [batch], "devices from batches \(stamps.sorted()) with progress of batch \(batch)")
            let memberships = Set(devices.map { $0.pins.first?.membership })
            #expect(memberships == [batch.isMultiple(of: 2) ? .inside : .outside])
            #expect(batch >= lastBatch, "progress never goes back")
            lastBatch = batch
        }
        #expect(lastBatch > 0, "the writer must have stored batches between kills")
    }
}
