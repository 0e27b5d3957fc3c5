import Foundation
import TestSupport
import Testing

@Suite("geoworker geocode --places", .timeLimit(.minutes(10)))
struct GeocodePlacesTests {
    @Test("--input: one JSON object per line with exactly the contract's members, in input order")
    func stream() async throws {
        let input = "40.7128,-74.0060\nnonsense\n48.5735,7.8150\n30,-40\n52.4986,13.4030\n"
        let result = try await runGeoworker(["geocode", "--places", "--input", "-"], input: input)
        #expect(result.status == 1, "a malformed line still shows in the exit status")
        #expect(result.errors.contains("line 2"))
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        try #require(lines.count == 5)
        #expect(
            lines[0]
                == #"{"lat":40.7128,"lon":-74.006,"country":"US","region":{"code":"US-NY","name":"New York","localName":"New York","source":"polygon"},"locality":{"name":"New York City","geonameId":5128581,"population":8804190,"distanceMeters":163},"timeZone":"America/New_York"}"#
        )
        #expect(lines[1] == #"{"error":"expected 'lat,lon' or 'lat lon' in degrees, in range"}"#)
        let kehl = try object(lines[2])
        #expect(Set(kehl.keys) == ["lat", "lon", "country", "region", "locality", "timeZone"])
        #expect(kehl["country"] as? String == "DE")
        let region = try #require(kehl["region"] as? [String: Any])
        #expect(region["code"] as? String == "DE-BW")
        #expect(region["source"] as? String == "nearest-place")
        #expect(Set(region.keys) == ["code", "name", "localName", "source"])
        let locality = try #require(kehl["locality"] as? [String: Any])
        #expect(locality["name"] as? String == "Kehl", "the German town, not Strasbourg across the river")
        #expect(Set(locality.keys) == ["name", "geonameId", "population", "distanceMeters"])
        #expect(kehl["timeZone"] as? String == "Europe/Berlin")
        let atlantic = try object(lines[3])
        #expect(atlantic["country"] is NSNull)
        #expect(atlantic["region"] is NSNull)
        #expect(atlantic["timeZone"] as? String == "Etc/GMT+3")
        let kreuzberg = try #require(try object(lines[4])["locality"] as? [String: Any])
        #expect(kreuzberg["name"] as? String == "Berlin", "the city, not its quarter")
        #expect(Set(kreuzberg.keys) == ["name", "geonameId", "population", "distanceMeters", "district"])
        let district = try #require(kreuzberg["district"] as? [String: Any])
        #expect(district["name"] as? String == "Kreuzberg")
        #expect(Set(district.keys) == ["name", "geonameId", "distanceMeters"])
    }

    @Test("a file of several read blocks: every line's places in input order, whatever order they were looked up in")
    func largeFile() async throws {
        // Four places far apart in turn (the lookups take them in another order: along a curve over the map), and
        // malformed lines; about 2.5 MB, more than one read block, each split between threads.
        let known = [
            ("52.4986,13.4030", #""country":"DE","#, #""locality":{"name":"Berlin","#),
            ("-33.92,18.42", #""country":"ZA","#, #""locality":{"name":"Cape Town","#),
            ("0,-30", #""country":null,"#, #""timeZone":"Etc/GMT+2""#),
            ("40.7128,-74.0060", #""country":"US","#, #""locality":{"name":"New York City","#),
        ]
        let lineCount = 120_000
        let malformed: Set<Int> = [7, 60_001, 119_999]
        var input = ""
        input.reserveCapacity(lineCount * 20)
        for line in 1...lineCount {
            input += malformed.contains(line) ? "not a coordinate \(line)" : known[line % known.count].0
            if line < lineCount { input += "\n" }  // the last line has no newline
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("geocode-places-\(UUID()).txt")
        try Data(input.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let result = try await runGeoworker(["geocode", "--places", "--input", file.path])
        #expect(result.status == 1)
        let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        try #require(lines.count == lineCount)
        var misplaced: [String] = []
        for (offset, text) in lines.enumerated() {
            let line = offset + 1
            let expected =
                malformed.contains(line)
                ? [#"{"error":"expected 'lat,lon' or 'lat lon' in degrees, in range"}"#]
                : [known[line % known.count].1, known[line % known.count].2]
            if !expected.allSatisfy({ text.contains($0) }) { misplaced.append("line \(line): \(text)") }
        }
        #expect(misplaced.isEmpty, "\(misplaced.count) lines: \(misplaced.prefix(3))")
        for line in malformed.sorted() {
            #expect(
                result.errors.contains(
                    "line \(line): expected 'lat,lon' or 'lat lon' in degrees, got 'not a coordinate \(line)'"
                )
            )
        }
    }

    @Test("one coordinate: the country's answer gains region, locality and time zone")
    func single() async throws {
        let result = try await runGeoworker(["geocode", "--places", "31.7619", "-106.4850"])
        #expect(result.status == 0, "\(result.errors)")
        let json = try object(Substring(result.output))
        #expect(json["country"] as? String == "US")
        #expect((json["region"] as? [String: Any])?["code"] as? String == "US-TX")
        #expect((json["locality"] as? [String: Any])?["name"] as? String == "El Paso")
        #expect(json["timeZone"] as? String == "America/Denver")
    }

    @Test("without --places the output is as before; a missing index is a clear error")
    func unchangedAndMissingIndex() async throws {
        let plain = try await runGeoworker(["geocode", "--input", "-"], input: "40.7128,-74.0060\n")
        #expect(plain.output == "US\n")
        let missing = try await runGeoworker([
            "geocode", "--places", "--places-index", "/nonexistent/places.idx", "1", "1",
        ])
        #expect(missing.status != 0)
        #expect(missing.errors.contains("/nonexistent/places.idx"))
    }

    private func object(_ line: Substring) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
}
