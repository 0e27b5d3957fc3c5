import Countries
import GeoCore
import Testing

/// The bundled index, loaded once for all tests.
let bundledIndex: CountryIndex = {
    do {
        return try CountryIndex.bundled()
    } catch {
        fatalError("bundled country index: \(error)")
    }
}()

func code(_ latitude: Double, _ longitude: Double, index: CountryIndex = bundledIndex) -> String? {
    index.country(at: Coordinate(latitude: latitude, longitude: longitude)!)?.code
}

@Suite("Country lookup: famous and tricky places", .timeLimit(.minutes(5)))
struct FamousPlacesTests {
    @Test(
        "well-known places",
        arguments: [
            ("Paris", 48.8566, 2.3522, "FR"),
            ("Geneva", 46.2044, 6.1432, "CH"),
            // At 1:10m the Vatican is a 100 x 130 m polygon around St Peter's Basilica (not the square).
            ("Vatican, St Peter's Basilica", 41.9033, 12.4534, "VA"),
            ("Rome, St Peter's Square (outside the data's Vatican)", 41.9022, 12.4568, "IT"),
            ("San Marino", 43.9356, 12.4473, "SM"),
            ("Maseru, Lesotho (inside South Africa)", -29.3167, 27.4833, "LS"),
            ("Bloemfontein, South Africa", -29.1217, 26.2140, "ZA"),
            // Baarle-Hertog's Belgian enclaves are below Natural Earth 1:10m's resolution: the data, and so
            // geoworker, says Netherlands there (README, "Country boundaries").
            ("Baarle-Hertog enclave (absent from the data)", 51.4390, 4.9285, "NL"),
            ("Baarle-Nassau (Netherlands)", 51.4460, 4.9380, "NL"),
            ("Llívia, Spanish exclave in France", 42.4640, 1.9800, "ES"),
            ("Nakhchivan, Azerbaijani exclave", 39.2089, 45.4122, "AZ"),
            ("Cabinda, Angolan exclave", -5.55, 12.2, "AO"),
            ("Ceuta", 35.8894, -5.3198, "ES"),
            ("Monaco", 43.7384, 7.4246, "MC"),
            ("Liechtenstein", 47.1410, 9.5209, "LI"),
            ("Gibraltar", 36.1408, -5.3536, "GI"),
            ("La Línea, Spain", 36.1650, -5.3480, "ES"),
            ("Kaliningrad", 54.7104, 20.4522, "RU"),
            ("Fiji, Taveuni east of 180", -16.85, -179.95, "FJ"),
            ("Fiji, Suva west of 180", -18.1416, 178.4419, "FJ"),
            ("Chukotka east of 180", 65.5, -172.0, "RU"),
            ("Chukotka, Anadyr", 64.7337, 177.5089, "RU"),
            ("Cayenne, French Guiana", 4.9224, -52.3135, "GF"),
            ("Pointe-à-Pitre, Guadeloupe", 16.2411, -61.5331, "GP"),
            ("Fort-de-France, Martinique", 14.6161, -61.0588, "MQ"),
            ("Saint-Denis, Réunion", -20.8823, 55.4504, "RE"),
            ("Mamoudzou, Mayotte", -12.7806, 45.2278, "YT"),
            ("Longyearbyen, Svalbard", 78.2232, 15.6267, "SJ"),
            ("Kralendijk, Bonaire", 12.1443, -68.2655, "BQ"),
            ("Flying Fish Cove, Christmas Island", -10.4275, 105.6790, "CX"),
            ("Taipei", 25.0330, 121.5654, "TW"),
            ("Pristina, Kosovo", 42.6629, 21.1655, "XK"),
            ("Amundsen-Scott, South Pole", -90.0, 0.0, "AQ"),
            ("South Pole, any longitude", -90.0, 137.0, "AQ"),
        ]
    )
    func place(name: String, latitude: Double, longitude: Double, expected: String) {
        #expect(code(latitude, longitude) == expected, "\(name)")
    }

    @Test("the North Pole and the open ocean belong to no country")
    func noCountry() {
        #expect(code(90, 0) == nil)
        #expect(code(90, -123) == nil)
        #expect(code(0, -30) == nil)  // mid-Atlantic
        #expect(code(-40, -120) == nil)  // South Pacific
        #expect(code(36.0, -30.0) == nil)  // between the Azores and Madeira
    }

    @Test("longitude 180 and -180 are the same meridian")
    func antimeridian() {
        for latitude in stride(from: -89.0, through: 89.0, by: 7.0) {
            #expect(code(latitude, 180) == code(latitude, -180), "at latitude \(latitude)")
        }
    }
}
