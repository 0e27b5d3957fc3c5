import GeoCore
import Testing

@Suite("lat,lon text", .timeLimit(.minutes(5)))
struct CoordinateTextTests {
    @Test("lat,lon and lat lon lines: blanks around numbers, signs, a point on one side, exponents")
    func latLonForms() throws {
        let cases: [(String, Double, Double)] = [
            ("48.8566,2.3522", 48.8566, 2.3522),
            (" 4.9224 ,\t-52.3135 ", 4.9224, -52.3135),
            ("+1.5,-2.25", 1.5, -2.25),
            (".5,5.", 0.5, 5),
            ("1e1,2E-1", 10, 0.2),
            ("-0,007", 0, 7),
            ("90,-180", 90, -180),
            // As people type them and maps copy them.
            ("48.8566 2.3522", 48.8566, 2.3522),
            ("48.8566\t-2.3522", 48.8566, -2.3522),
            ("48.8566, 2.3522", 48.8566, 2.3522),
        ]
        for (text, latitude, longitude) in cases {
            let coordinate = try #require(Coordinate(latLon: Array(text.utf8)[...]), "\(text)")
            #expect(coordinate.latitude == latitude, "\(text)")
            #expect(coordinate.longitude == longitude, "\(text)")
        }
    }

    @Test("not a lat,lon line, or out of range: nil")
    func latLonRefusals() {
        let refused = [
            "", ",", "1,", ",1", "1,2,3", "a,b", "1 2,3", "--1,2", "+-1,2", "1e,2", ".,1", "0x1p3,1", "nan,1",
            "inf,0", "1,2x", "91,0", "0,180.5", "1;2",
        ]
        for text in refused {
            #expect(Coordinate(latLon: Array(text.utf8)[...]) == nil, "'\(text)'")
        }
    }

    @Test("why a text is not a coordinate, in the words of the person who typed it")
    func latLonProblems() {
        #expect(Coordinate.latLonProblem("91,0") == "latitude 91.0 is outside -90...90")
        #expect(Coordinate.latLonProblem("0 -180.5") == "longitude -180.5 is outside -180...180")
        #expect(Coordinate.latLonProblem("Paris") == "expected 'lat,lon' or 'lat lon' in degrees")
        #expect(Coordinate.latLonProblem("48.85,2.35") == nil)
    }
}
