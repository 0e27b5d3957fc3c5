import Foundation
import TestSupport
import Testing

/// The README's "First run on your own Kafka", run as a script against noida-db: the commands a new user copies,
/// from creating the topics to reading the event of their own pin (issue 65).
// Ten minutes: its programs wait for one of the suite-wide program slots (one per core, ChildProcess), which the
// demo's and the first run's programs hold for minutes while the whole suite runs.
@Suite("The README's first run", .timeLimit(.minutes(10)))
struct FirstRunScriptTests {
    /// The README's block after `# first-run`, without its build and install lines (`make test` has built the
    /// binaries and installed kcat: the script runs the debug build's `geoworker`).
    static func script() throws -> String {
        let readme = try String(
            contentsOf: ServiceTestBed.repositoryRoot.appendingPathComponent("README.md"),
            encoding: .utf8
        )
        let start = try #require(readme.range(of: "```sh\n# first-run\n"))
        let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
        return readme[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.hasPrefix("swift build") && !$0.hasPrefix("sudo apt-get") }
            .joined(separator: "\n")
    }

    @Test("from nothing to the pin's event: topics, a pin, a position, the worker, the event")
    func firstRun() async throws {
        let broker = try await NoidaBroker()
        defer { broker.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("first-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let binaries = URL(fileURLWithPath: ChildProcess.builtExecutable("geoworker")).deletingLastPathComponent().path
        let script = try Self.script()
        #expect(script.contains("geoworker topics create") && script.contains("geoworker tail"), "\(script)")
        let run = try BackgroundProcess(
            "/bin/bash",
            ["-euo", "pipefail", "-c", script],
            environment: [
                "KAFKA": broker.bootstrapServers,
                "PATH": binaries + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                // Other tests listen meanwhile: any free port rather than 8080.
                "GEOWORKER_HTTP_PORT": "0",
            ],
            keepOutput: true,
            in: directory.path
        )
        let ending = await run.waitForExit(timeout: .seconds(180))
        #expect(ending == .exited(0), "\(run.output)\(run.errors.suffix(3000))")
        let entered = run.output.split(separator: "\n").first { $0.contains("geofence.entered") }
        #expect(entered?.contains("truck-17") == true, "\(run.output)")
        #expect(entered?.contains("Geneva depot (depot)") == true, "\(run.output)")
    }
}
