import Foundation
import TestSupport
import Testing

@Suite("geoworker geocode --places", .timeLimit(.minutes(5)))
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
        #expect(lines[1] == #"{"error":"expected 'lat,lon' in degrees"}"#)
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
