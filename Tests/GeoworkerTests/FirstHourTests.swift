import ArgumentParser
import Foundation
import TestSupport
import Testing

@testable import geoworker

/// What a new user meets in the first hour with the tools (issue 65): the coordinates people type, the shapes people
/// have, and errors that name what to fix.
// Ten minutes: its programs wait for one of the suite-wide program slots (one per core, ChildProcess), which the
// demo's and the first run's programs hold for minutes while the whole suite runs.
@Suite("A user's first hour with the tools", .timeLimit(.minutes(10)))
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
