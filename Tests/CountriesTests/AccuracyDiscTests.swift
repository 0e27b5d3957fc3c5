import Countries
import GeoCore
import Testing

/// The country of a whole accuracy disc: what decides a device's country.
@Suite("Country of an accuracy disc", .timeLimit(.minutes(5)))
struct AccuracyDiscTests {
    func disc(
        _ latitude: Double,
        _ longitude: Double,
        _ radius: Double,
        index: CountryIndex = bundledIndex
    ) -> String? {
        index.country(at: Coordinate(latitude: latitude, longitude: longitude)!, within: radius)?.code
    }

    @Test(
        "a disc inside one country is that country's; one that reaches a border is no one's",
        arguments: [
            // (place, latitude, longitude, radius in metres, expected)
            ("Lyon, 100 km from any border", 45.76, 4.84, 1_000, "FR"),
            ("Lyon, a 150 km disc reaches Switzerland", 45.76, 4.84, 150_000, nil),
            // Natural Earth's 1:10m Vatican is a few tens of metres across: smaller than a phone's fix.
            ("the Vatican, a 5 m fix", 41.9035, 12.4530, 5, "VA"),
            ("the Vatican, a 20 m fix is wider than it", 41.9035, 12.4530, 20, nil),
            ("Rome by the Vatican, a 50 m fix", 41.9033, 12.4510, 50, "IT"),
            ("San Marino, 1 km around its centre", 43.9375, 12.4500, 1_000, "SM"),
            ("San Marino, 10 km: Italy too", 43.9375, 12.4500, 10_000, nil),
            ("Liechtenstein, 500 m in Triesenberg", 47.118, 9.545, 500, "LI"),
            ("Liechtenstein, 10 km: Switzerland and Austria too", 47.118, 9.545, 10_000, nil),
            ("Lesotho's centre, 20 km", -29.6, 28.2, 20_000, "LS"),
            ("Lesotho's edge at Maseru, 5 km reaches South Africa", -29.315, 27.48, 5_000, nil),
            ("South Africa's Free State, 2 km", -28.5, 26.5, 2_000, "ZA"),
            ("Chukotka across the antimeridian, 5 km", 66.0, 179.98, 5_000, "RU"),
            ("Chukotka west of the antimeridian, 5 km", 66.0, -179.98, 5_000, "RU"),
            ("Taveuni (Fiji) astride the antimeridian, 500 m", -16.84, 179.99, 500, "FJ"),
            ("mid-Atlantic", 40.0, -40.0, 1_000, nil),
        ] as [(String, Double, Double, Double, String?)]
    )
    func discs(place: String, latitude: Double, longitude: Double, radius: Double, expected: String?) {
        #expect(disc(latitude, longitude, radius) == expected, "\(place)")
    }

    @Test("a radius of 0 is the point's own country")
    func pointLookup() {
        for (latitude, longitude) in [(45.76, 4.84), (41.9035, 12.4530), (-29.315, 27.48), (43.62, 7.25)] {
            let point = Coordinate(latitude: latitude, longitude: longitude)!
            #expect(bundledIndex.country(at: point, within: 0) == bundledIndex.country(at: point))
        }
    }

    @Test("at a coast the tolerance decides: its sea counts as the country's only when the tolerance reaches across")
    func coasts() {
        // 4.5 km off Nice: with the 22 km tolerance the sea resolves to France but Monaco's coast (14.7 km) is
        // within reach of a large disc.
        #expect(disc(43.62, 7.25, 100) == "FR")
        #expect(disc(43.62, 7.25, 100, index: bundledIndex.withCoastalTolerance(0)) == nil)
        #expect(disc(43.62, 7.25, 5_000) == nil, "Monaco's coast is within the tolerance of part of the disc")
        // Western Ireland, 17 km out: the farthest point of a 10 km disc is beyond the tolerance.
        #expect(disc(53.3, -10.35, 1_000) == "IE")
        #expect(disc(53.3, -10.35, 10_000) == nil)
        // Brest, on land by the harbour: a 3 km disc takes in sea, which counts only with a tolerance.
        #expect(disc(48.383, -4.495, 3_000) == "FR")
        #expect(disc(48.383, -4.495, 3_000, index: bundledIndex.withCoastalTolerance(0)) == nil)
    }
}
