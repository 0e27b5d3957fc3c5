import Countries
import GeoCore
import Testing

@Suite("Country lookup at sea", .timeLimit(.minutes(5)))
struct CoastTests {
    @Test(
        "within 12 nautical miles of land, the nearest country; farther out, none",
        arguments: [
            // (place, latitude, longitude, expected; distances to land measured with shapely)
            ("4.5 km off Nice (Monaco 14.7 km)", 43.62, 7.25, "FR"),
            ("10.2 km off Dover (France 24.2 km)", 51.07, 1.45, "GB"),
            ("9.2 km off Havana", 23.25, -82.35, "CU"),
            ("8.4 km off Réunion", -21.0, 55.15, "RE"),
            ("13.2 km off Bonaire (Curaçao 36.9 km)", 12.05, -68.4, "BQ"),
            ("17.0 km off western Ireland", 53.3, -10.35, "IE"),
            ("19.6 km off Chukotka, across the antimeridian", 65.0, -179.5, "RU"),
            ("20.6 km into the Gulf of Finland from Estonia", 59.85, 25.4, "EE"),
            ("35 km off Portugal", 38.7, -9.9, nil),
            ("mid-Atlantic", 40.0, -40.0, nil),
        ] as [(String, Double, Double, String?)]
    )
    func territorialSea(place: String, latitude: Double, longitude: Double, expected: String?) {
        #expect(code(latitude, longitude) == expected, "\(place)")
    }

    @Test("the tolerance is configurable, and 0 turns it off")
    func configurable() {
        #expect(code(43.62, 7.25, index: bundledIndex.withCoastalTolerance(0)) == nil)
        #expect(code(38.7, -9.9, index: bundledIndex.withCoastalTolerance(40_000)) == "PT")
        #expect(code(51.07, 1.45, index: bundledIndex.withCoastalTolerance(5_000)) == nil)
        #expect(bundledIndex.coastalTolerance == CountryIndex.territorialSea)
    }

    @Test("land the data gives to no one is treated like sea: no country, or the nearest within the tolerance")
    func unassignedLand() {
        // Bir Tawil, claimed by neither Egypt nor Sudan, 14 km south of the Egyptian border at 22°N.
        #expect(code(21.87, 33.75, index: bundledIndex.withCoastalTolerance(0)) == nil)
        #expect(code(21.87, 33.75) == "EG")
        #expect(code(21.87, 33.75, index: bundledIndex.withCoastalTolerance(10_000)) == nil)
    }
}
