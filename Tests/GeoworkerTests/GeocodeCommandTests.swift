import Foundation
import TestSupport
import Testing

/// Runs the built `geoworker` executable.
func runGeoworker(_ arguments: [String], input: String? = nil) async throws -> ChildProcess.Result {
    try await ChildProcess.run(ChildProcess.builtExecutable("geoworker"), arguments, input: input)
}

@Suite("geoworker geocode", .timeLimit(.minutes(10)))
struct GeocodeCommandTests {
    @Test("one coordinate: the country, its name and the language to suggest, as JSON")
    func single() async throws {
        let result = try await runGeoworker(["geocode", "46.2044", "6.1432", "--languages", "fr-BE,en"])
        #expect(result.status == 0, "\(result.errors)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        #expect(json["country"] as? String == "CH")
        #expect(json["countryName"] as? String == "Switzerland")
        #expect(json["language"] as? String == "fr-CH")
        #expect(json["basis"] as? String == "device-language")
    }

    @Test("negative coordinates need no special syntax; at sea the country is null")
    func negativeAndSea() async throws {
        let capeTown = try await runGeoworker(["geocode", "-33.92", "18.42"])
        #expect(capeTown.output.contains(#""country":"ZA""#))
        let atlantic = try await runGeoworker(["geocode", "0", "-30"])
        #expect(atlantic.status == 0)
        #expect(atlantic.output.contains(#""country":null"#))
    }

    @Test("bad coordinates are refused with a clear message")
    func refused() async throws {
        let result = try await runGeoworker(["geocode", "91", "0"])
        #expect(result.status != 0)
        #expect(result.errors.contains("Latitude 91.0 is outside -90...90"), "\(result.errors)")
    }

    @Test("streaming: one line out per line in, in order; malformed lines keep their place and are reported")
    func stream() async throws {
        let input = "48.8566,2.3522\n-90,0\nnonsense\n 4.9224 , -52.3135\n0,-30\r\n91,0\n43.62,7.25"
        let result = try await runGeoworker(["geocode", "--input", "-"], input: input)
        #expect(result.output == "FR\nAQ\n\nGF\n\n\nFR\n")
        #expect(result.status == 1, "malformed lines must show in the exit status")
        #expect(result.errors.contains("line 3"))
        #expect(result.errors.contains("line 6"))

        let noTolerance = try await runGeoworker(
            ["geocode", "--input", "-", "--tolerance-km", "0"],
            input: "43.62,7.25\n"
        )
        #expect(noTolerance.output == "\n")
        #expect(noTolerance.status == 0)
    }
}

@Suite("geoworker geocode, large inputs", .timeLimit(.minutes(10)))
struct GeocodeLargeInputTests {
    @Test("a file larger than a read block, cut into parallel stretches: every line in order, failures numbered")
    func largeFile() async throws {
        // Four known answers in turn (Paris, Cape Town, open Atlantic, Madrid); about 6 MB, more than one
        // read block, so lines straddle blocks and every block is split between threads.
        let known = [("48.8566,2.3522", "FR"), ("-33.92,18.42", "ZA"), ("0,-30", ""), ("40.4168,-3.7038", "ES")]
        let lineCount = 300_000
        let malformed: Set<Int> = [5, 150_001, 250_001]
        var input = ""
        var expected = ""
        input.reserveCapacity(lineCount * 20)
        for line in 1...lineCount {
            if malformed.contains(line) {
                input += "not a coordinate \(line)"
                expected += "\n"
            } else {
                let (text, code) = known[line % known.count]
                input += text
                expected += code + "\n"
            }
            if line < lineCount { input += "\n" }  // the last line has no newline
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("geocode-\(UUID()).txt")
        try Data(input.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = try await runGeoworker(["geocode", "--input", file.path])
        #expect(result.status == 1)
        #expect(result.output.utf8.count { $0 == UInt8(ascii: "\n") } == lineCount)
        #expect(result.output == expected)
        for line in malformed.sorted() {
            #expect(
                result.errors.contains(
                    "line \(line): expected 'lat,lon' or 'lat lon' in degrees, got 'not a coordinate \(line)'"
                )
            )
        }
    }
}
