import Foundation
import TestSupport
import Testing

@testable import geoworker

/// Settings geoworker does not read, and files that are not JSON, stop every command before it starts (issue 65,
/// item 4).
// Ten minutes: its programs wait for one of the suite-wide program slots (one per core, ChildProcess), which the
// demo's and the first run's programs hold for minutes while the whole suite runs.
@Suite("Settings and addresses a start refuses", .timeLimit(.minutes(10)))
struct UnknownSettingsTests {
    private func file(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("settings-\(UUID().uuidString).json")
        try Data(text.utf8).write(to: path)
        return path.path
    }

    @Test("a key no setting has, anywhere in the file, is named with the nearest one")
    func unknownFileKeys() throws {
        for (text, message) in [
            (#"{"broker": "kafka:9092"}"#, #""broker" is not a geoworker setting (did you mean "brokers"?)"#),
            (#"{"brokers": "k:9092", "topics": {"position": "p"}}"#, #""topics.position" is not a geoworker setting"#),
            (#"{"http": {"prot": 8081}}"#, #"(did you mean "http.port"?)"#),
        ] {
            let path = try file(text)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let error = try #require(throws: CommandFailure.self) {
                try SettingsAudit.check(configFile: path, environment: [:])
            }
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test("a file that is not strict JSON or not an object is refused; nested known keys and objects under them pass")
    func strictJSON() throws {
        for text in [#"{"brokers": "k:9092",}"#, #"["brokers"]"#, "brokers: k:9092"] {
            let path = try file(text)
            defer { try? FileManager.default.removeItem(atPath: path) }
            #expect(throws: CommandFailure.self, "\(text)") {
                try SettingsAudit.check(configFile: path, environment: [:])
            }
        }
        let good = try file(
            #"{"brokers": "k:9092", "kafka": ["security.protocol=SSL"], "http": {"port": 8081, "token": "t"},"#
                + #" "tracker": {"catalogTags": ["depots"]}, "address": {"provider": "http://127.0.0.1:1"}}"#
        )
        defer { try? FileManager.default.removeItem(atPath: good) }
        try SettingsAudit.check(configFile: good, environment: [:])
    }

    @Test("a GEOWORKER_ variable that is no setting is named with the nearest one; the project's own switches pass")
    func unknownVariables() throws {
        let error = try #require(throws: CommandFailure.self) {
            try SettingsAudit.check(configFile: nil, environment: ["GEOWORKER_HTTP_PROT": "8081", "PATH": "/bin"])
        }
        #expect(error.description.contains("GEOWORKER_HTTP_PROT is not a geoworker setting"), "\(error)")
        #expect(error.description.contains("did you mean GEOWORKER_HTTP_PORT?"), "\(error)")
        try SettingsAudit.check(
            configFile: nil,
            environment: ["GEOWORKER_GROUP_ID": "g", "GEOWORKER_CONFIG": "/x", "GEOWORKER_WARNINGS_AS_ERRORS": "1"]
        )
    }

    @Test("every key in docs/configuration.md's table is one geoworker reads, under the variable the table gives")
    func documentedKeysAreKnown() throws {
        let table = try String(
            contentsOfFile: ServiceTestBed.repositoryRoot.appendingPathComponent("docs/configuration.md").path,
            encoding: .utf8
        )
        let rows = table.split(separator: "\n").compactMap { line -> (key: String, variable: String)? in
            guard let match = line.firstMatch(of: /^\| `([A-Za-z.]+)`.*\| `(GEOWORKER_[A-Z_]+)` \|/) else { return nil }
            return (String(match.1), String(match.2))
        }
        #expect(rows.count > 40)
        for row in rows {
            #expect(SettingsAudit.knownKeys.contains(row.key), "\(row.key)")
            #expect(SettingsAudit.environmentName(of: row.key) == row.variable, "\(row.key)")
        }
    }

    @Test("run --http-devices on every interface without a token stops before it connects, saying how to go on")
    func openDevicesStop() async throws {
        let result = try await runGeoworker(["run", "--brokers", "127.0.0.1:1", "--http-devices"])
        #expect(result.status != 0)
        #expect(result.errors.contains("without a token to anyone who reaches 0.0.0.0:8080"), "\(result.errors)")
    }

    @Test("a busy HTTP port stops run before it connects, naming the port and the setting")
    func busyPort() async throws {
        // Held by this process for as long as the test runs, however long the run waits to start.
        let (holder, port) = try Self.listenOnFreePort()
        defer { close(holder) }
        let run = try BackgroundProcess(
            ChildProcess.builtExecutable("geoworker"),
            ["run", "--brokers", "127.0.0.1:1", "--http-port", "\(port)"]
        )
        defer { run.send(SIGKILL) }
        // A run that did not see the port taken waits for its broker for ever: stopped after a minute, and failed.
        let ending = await run.waitForExit(timeout: .seconds(60))
        #expect(ending != nil && ending != .exited(0), "\(run.errors.suffix(2000))")
        #expect(
            run.errors.contains("the HTTP port 0.0.0.0:\(port) is in use by another process: set http.port"),
            "\(run.errors.suffix(2000))"
        )
        #expect(!run.errors.contains("kafka"), "nothing touched Kafka: \(run.errors.suffix(2000))")
    }

    /// A socket of this process listening on a free port of every interface, and the port.
    static func listenOnFreePort() throws -> (descriptor: Int32, port: Int) {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = INADDR_ANY
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && listen(descriptor, 1) == 0
                    && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else {
            let failure = POSIXError(.init(rawValue: errno) ?? .EIO)
            close(descriptor)
            throw failure
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test("every setting has a flag: --set KEY=VALUE, read as its variable would be, above the environment")
    func setFlag() async throws {
        let unknown = try await runGeoworker(["run", "--set", "address.provder=http://127.0.0.1:1"])
        #expect(
            unknown.errors.contains("--set address.provder: not a geoworker setting (did you mean address.provider?)")
        )
        let unusable = try await runGeoworker(["run", "--set", "http.port=eighty"])
        #expect(unusable.errors.contains("http.port must be an integer (got \"eighty\")"), "\(unusable.errors)")
        // Taken: a boolean and a string, which together make the open-devices refusal that names the host.
        let set = try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["run", "--brokers", "127.0.0.1:1", "--set", "http.devices=true", "--set", "http.host=0.0.0.0"]
        )
        #expect(set.errors.contains("anyone who reaches 0.0.0.0:8080"), "\(set.errors)")
        let help = try await runGeoworker(["run", "--help"])
        #expect(help.output.contains("--set <KEY=VALUE>"), "\(help.output)")
        for flag in ["--address-provider", "--address-user-agent", "--address-prefetch", "--http-host"] {
            #expect(help.output.contains(flag), "\(flag): \(help.output)")
        }
    }

    @Test("run with an unknown key stops before it connects, naming the key")
    func runStops() async throws {
        let path = try file(#"{"brokers": "127.0.0.1:1", "httpPort": 8081}"#)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try await runGeoworker(["run", "--config", path])
        #expect(result.status != 0)
        #expect(
            result.errors.contains(#""httpPort" is not a geoworker setting (did you mean "http.port"?)"#),
            "\(result.errors)"
        )
    }
}
