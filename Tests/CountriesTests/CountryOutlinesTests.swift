import Countries
import Foundation
import Testing

@Suite("Country outlines for the operations page", .timeLimit(.minutes(5)))
struct CountryOutlinesTests {
    @Test("outlines keep every country recognisable at a fraction of the index: rings around known places")
    func outlinesShape() throws {
        let bytes = CountryOutlines.json(of: try CountryIndex.bundled())
        #expect(bytes.count < 1_500_000, "small enough to send to a browser: \(bytes.count) bytes")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let precision = try #require(object["precision"] as? Double)
        let rings = try #require(object["rings"] as? [[Double]]).map { ring in
            stride(from: 0, to: ring.count, by: 2).map { (ring[$0] / precision, ring[$0 + 1] / precision) }
        }
        #expect(rings.count > 200)
        // Each of these places lies inside an odd number of rings (land), each sea point in none or an even number.
        func inside(_ lon: Double, _ lat: Double) -> Bool {
            rings.reduce(false) { odd, ring in
                var crossings = false
                for index in 0..<ring.count - 1 {
                    let (x1, y1) = ring[index]
                    let (x2, y2) = ring[index + 1]
                    if (y1 > lat) != (y2 > lat) && lon < x1 + (lat - y1) / (y2 - y1) * (x2 - x1) { crossings.toggle() }
                }
                return odd != crossings
            }
        }
        for (lon, lat) in [(2.35, 48.86), (13.4, 52.52), (-77.04, 38.9), (139.7, 35.7), (-47.9, -15.8), (28.0, -26.2)] {
            #expect(inside(lon, lat), "land at \(lon), \(lat)")
        }
        for (lon, lat) in [(-30.0, 40.0), (-140.0, 0.0), (70.0, -20.0)] {
            #expect(!inside(lon, lat), "sea at \(lon), \(lat)")
        }
    }
}
