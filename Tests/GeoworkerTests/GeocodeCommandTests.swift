import Foundation
import TestSupport
import Testing

/// Runs the built `geoworker` executable.
func runGeoworker(_ arguments: [String], input: String? = nil) throws -> ChildProcess.Result {
    try ChildProcess.run(ChildProcess.builtExecutable("geoworker"), arguments, input: input)
}

@Suite("geoworker geocode")
struct GeocodeCommandTests {
    @Test("one coordinate: the country, its name and the language to suggest, as JSON")
    func single() throws {
        let result = try runGeoworker(["geocode", "46.2044", "6.1432", "--languages", "fr-BE,en"])
        #expect(result.status == 0, "\(result.errors)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(json["country"] as? String == "CH")
        #expect(json["countryName"] as? String == "Switzerland")
        #expect(json["language"] as? String == "fr-CH")
        #expect(json["basis"] as? String == "device-language")
    }

    @Test("negative coordinates need no special syntax; at sea the country is null")
    func negativeAndSea() throws {
        let capeTown = try runGeoworker(["geocode", "-33.92", "18.42"])
        #expect(capeTown.output.contains(#""country":"ZA""#))
        let atlantic = try runGeoworker(["geocode", "0", "-30"])
        #expect(atlantic.status == 0)
        #expect(atlantic.output.contains(#""country":null"#))
    }

    @Test("bad coordinates are refused with a clear message")
    func refused() throws {
        let result = try runGeoworker(["geocode", "91", "0"])
        #expect(result.status != 0)
        #expect(result.errors.contains("Latitude must be within -90...90"))
    }

    @Test("streaming: one line out per line in, in order; malformed lines keep their place and are reported")
    func stream() throws {
        let input = "48.8566,2.3522\n-90,0\nnonsense\n 4.9224 , -52.3135\n0,-30\r\n91,0\n43.62,7.25"
        let result = try runGeoworker(["geocode", "--input", "-"], input: input)
        #expect(result.output == "FR\nAQ\n\nGF\n\n\nFR\n")
        #expect(result.status == 1, "malformed lines must show in the exit status")
        #expect(result.errors.contains("line 3"))
        #expect(result.errors.contains("line 6"))

        let noTolerance = try runGeoworker(["geocode", "--input", "-", "--tolerance-km", "0"], input: "43.62,7.25\n")
        #expect(noTolerance.output == "\n")
        #expect(noTolerance.status == 0)
    }
}
