import ArgumentParser
import Foundation
import TestSupport
import Testing

@testable import geoworker

/// What a new user meets in the first hour with the tools (issue 65): the coordinates people type, the shapes people
/// have, and errors that name what to fix.
@Suite("A user's first hour with the tools", .timeLimit(.minutes(5)))
struct FirstHourTests {
    @Test("a longitude west of Greenwich and a latitude south of the equator are numbers, not flags")
    func negativeCoordinates() throws {
        let track = try PinsCommand.Track.parse(
            ["--device", "d", "--id", "home", "--lat", "-33.92", "--lon", "-74.0060", "--radius", "300"]
        )
        #expect(track.definition.lat == -33.92)
        #expect(track.definition.lon == -74.006)
        let put = try GeofencesCommand.Put.parse(
            ["--id", "depot", "--tags", "depots", "--lat", "-1.5", "--lon", "-0.25", "--radius", "100"]
        )
        #expect(put.definition.lon == -0.25)
    }

    @Test("a negative radius reaches the range check, which names the range")
    func negativeRadius() async throws {
        let result = try await runGeoworker(
            [
                "pins", "track", "--device", "d", "--id", "home", "--lat", "40.7128", "--lon", "-74.0060", "--radius",
                "-5", "--brokers", "127.0.0.1:1",
            ]
        )
        #expect(result.status != 0)
        #expect(result.errors.contains("--radius must be a number from 1 to 100000"), "\(result.errors)")
        #expect(!result.errors.contains("Missing value"), "\(result.errors)")
    }

    @Test("geocode takes a point as maps copy it, lines on standard input, and says why a point is out of range")
    func geocodeInputForms() async throws {
        let copied = try await runGeoworker(["geocode", "48.8566,2.3522"])
        #expect(copied.status == 0, "\(copied.errors)")
        #expect(copied.output.contains(#""country":"FR""#), "\(copied.output)")
        let piped = try await runGeoworker(["geocode"], input: "48.8566,2.3522\n46.2044 6.1432\n91,0\n")
        #expect(piped.output.split(separator: "\n", omittingEmptySubsequences: false).prefix(3) == ["FR", "CH", ""])
        #expect(piped.errors.contains("line 3: latitude 91.0 is outside -90...90, got '91,0'"), "\(piped.errors)")
        #expect(piped.status == 1)
        let places = try await runGeoworker(["geocode", "--places"], input: "48.8566 2.3522\n")
        #expect(places.output.contains(#""country":"FR""#), "\(places.output)\(places.errors)")
        let outOfRange = try await runGeoworker(["geocode", "91", "0"])
        #expect(outOfRange.status != 0)
        #expect(outOfRange.errors.contains("Latitude 91.0 is outside -90...90"), "\(outOfRange.errors)")
    }

    static let square = #"{"type":"Polygon","coordinates":[[[7.7,48.5],[7.8,48.5],[7.8,48.6],[7.7,48.6],[7.7,48.5]]]}"#

    @Test("--shape takes a geometry, a Feature, or a FeatureCollection of one Feature, as geojson.io exports them")
    func shapesAsPeopleHaveThem() throws {
        let feature = #"{"type":"Feature","properties":{"name":"Yard"},"geometry":\#(Self.square)}"#
        let collection = #"{"type":"FeatureCollection","features":[\#(feature)]}"#
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("yard-\(UUID().uuidString).geojson")
        try Data(collection.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for argument in [Self.square, feature, collection, "@" + file.path] {
            let geometry = try #require(try PinDefinitionOptions.geometry(argument) as? [String: Any])
            #expect(geometry["type"] as? String == "Polygon", "\(argument)")
        }
    }

    @Test("a FeatureCollection of several features says to import them; the error names no usage")
    func severalFeatures() async throws {
        let feature = #"{"type":"Feature","properties":{},"geometry":\#(Self.square)}"#
        let collection = #"{"type":"FeatureCollection","features":[\#(feature),\#(feature)]}"#
        #expect(throws: CommandFailure.self) { try PinDefinitionOptions.geometry(collection) }
        let result = try await runGeoworker(
            ["pins", "track", "--device", "d", "--id", "yard", "--shape", collection, "--brokers", "127.0.0.1:1"]
        )
        #expect(result.status != 0)
        #expect(result.errors.contains("has 2 features"), "\(result.errors)")
        #expect(result.errors.contains("geoworker geofences import"), "\(result.errors)")
        #expect(!result.errors.contains("USAGE"), "\(result.errors)")
        let missing = try await runGeoworker(
            ["pins", "track", "--device", "d", "--id", "yard", "--shape", "@/nonexistent/yard.geojson"]
        )
        #expect(missing.errors.contains("cannot read /nonexistent/yard.geojson"), "\(missing.errors)")
        #expect(!missing.errors.contains("USAGE"), "\(missing.errors)")
    }
}

/// Settings geoworker does not read, and files that are not JSON, stop every command before it starts (issue 65,
/// item 4).
@Suite("Unknown settings", .timeLimit(.minutes(5)))
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

    @Test("every key in the README's settings table is one geoworker reads, under the variable the table gives")
    func readmeKeysAreKnown() throws {
        let readme = try String(
            contentsOfFile: ServiceTestBed.repositoryRoot.appendingPathComponent("README.md").path,
            encoding: .utf8
        )
        let rows = readme.split(separator: "\n").compactMap { line -> (key: String, variable: String)? in
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
