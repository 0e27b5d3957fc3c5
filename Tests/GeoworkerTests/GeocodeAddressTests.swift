import Foundation
import TestSupport
import Testing

/// `geoworker geocode --address` against a real Nominatim (Monaco's extract, `scripts/nominatim.sh`).
@Suite("geoworker geocode --address", .serialized, .timeLimit(.minutes(10)))
struct GeocodeAddressTests {
    @Test(
        "a file of points: one address per line in order, malformed lines reported; a second run answers from the cache"
    )
    func bulk() async throws {
        let nominatim = try await NominatimServer()
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("geocode-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let input = "43.7396,7.4277\nnot a point\n43.7313,7.4197\n43.7276,7.4156\n"
        let arguments = [
            "geocode", "--address", "--provider", nominatim.baseURL, "--state-dir", state,
            "--max-requests-per-second", "5", "--input", "-",
        ]
        let first = try await runGeoworker(arguments, input: input)
        #expect(first.status == 1, "a malformed line makes the exit status 1")
        #expect(
            first.errors.contains("line 2: expected 'lat,lon' or 'lat lon' in degrees, got 'not a point'"),
            "\(first.errors)"
        )
        let lines = first.output.split(separator: "\n").map(String.init)
        try #require(lines.count == 4, "\(first.output)")
        #expect(lines[1] == #"{"error":"expected 'lat,lon' or 'lat lon' in degrees, in range"}"#)
        let quarters = [0: "Monte-Carlo", 2: "Monaco-Ville", 3: "Fontvieille"]
        for (index, quarter) in quarters {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(lines[index].utf8)) as? [String: Any])
            let address = try #require(object["address"] as? [String: Any], "\(lines[index])")
            #expect(address["status"] as? String == "current", "\(lines[index])")
            #expect(address["suburb"] as? String == quarter, "\(lines[index])")
        }
        #expect(nominatim.reverseRequests == 3)

        let second = try await runGeoworker(arguments, input: input)
        #expect(second.output.split(separator: "\n").filter { $0.contains(#""status":"cached""#) }.count == 3)
        #expect(nominatim.reverseRequests == 3, "answered from addresses.sqlite in the state directory")
    }
}
