import Foundation
import TestSupport
import Testing

@testable import geoworker

/// Settings geoworker does not read, and files that are not JSON, stop every command before it starts (issue 65,
/// item 4).
@Suite("Settings and addresses a start refuses", .timeLimit(.minutes(5)))
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
        // A port held by a listener of this process.
        let holder = try BackgroundProcess("/usr/bin/python3", ["-c", Self.listener], keepOutput: true)
        defer { holder.send(SIGTERM) }
        try await waitUntil("the listener holds a port") { holder.output.contains("port ") || !holder.isRunning }
        let port = try #require(holder.output.firstMatch(of: /port (\d+)/).map { String($0.1) })
        let result = try await runGeoworker(["run", "--brokers", "127.0.0.1:1", "--http-port", port])
        #expect(result.status != 0)
        #expect(
            result.errors.contains("the HTTP port 0.0.0.0:\(port) is in use by another process: set http.port"),
            "\(result.errors)"
        )
        #expect(!result.errors.contains("kafka"), "nothing touched Kafka: \(result.errors)")
    }

    /// A Python program that listens on a free port of every interface and prints it.
    static let listener = """
        import socket, sys, time
        s = socket.socket(); s.bind(("0.0.0.0", 0)); s.listen()
        print("port", s.getsockname()[1], flush=True)
        time.sleep(120)
        """

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
