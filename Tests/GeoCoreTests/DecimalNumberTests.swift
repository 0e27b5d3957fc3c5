import Foundation
import TestSupport
import Testing

@testable import GeoCore

@Suite("decimal numbers and lat,lon text")
struct DecimalNumberTests {
    @Test("lat,lon lines: blanks around numbers, signs, a point on one side, exponents")
    func latLonForms() throws {
        let cases: [(String, Double, Double)] = [
            ("48.8566,2.3522", 48.8566, 2.3522),
            (" 4.9224 ,\t-52.3135 ", 4.9224, -52.3135),
            ("+1.5,-2.25", 1.5, -2.25),
            (".5,5.", 0.5, 5),
            ("1e1,2E-1", 10, 0.2),
            ("-0,007", 0, 7),
            ("90,-180", 90, -180),
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

    @Test("every value is the correctly rounded one: the fast path and the long-mantissa path agree with strtod")
    func correctlyRounded() {
        var random = SplitMix64(seed: 42)
        for round in 0..<200_000 {
            let value = Double.random(in: -180...180, using: &random)
            // 1 to 17 significant decimals, as receivers and computed doubles write them; some in exponent form.
            let decimals = round % 17 + 1
            let text =
                round % 11 == 0 ? String(format: "%.\(decimals)e", value) : String(format: "%.\(decimals)f", value)
            let parsed = Array(text.utf8).withUnsafeBytes { bytes in
                try? DecimalNumber.scan(bytes, from: 0, grammar: .lenient)
            }
            #expect(parsed?.value == Double(text), "\(text)")
            #expect(parsed?.end == text.utf8.count, "\(text)")
            if parsed?.value != Double(text) { return }
        }
    }

    @Test("JSON's grammar stays strict: no leading zeros, no plus, digits on both sides of the point")
    func jsonGrammar() throws {
        func scan(_ text: String) -> Result<Double, DecimalNumber.Failure> {
            Array(text.utf8).withUnsafeBytes { bytes in
                Result { () throws(DecimalNumber.Failure) in
                    try DecimalNumber.scan(bytes, from: 0, grammar: .json).value
                }
            }
        }
        #expect(try scan("0.25").get() == 0.25)
        #expect(try scan("-12e2").get() == -1200)
        #expect(try scan("0").get() == 0)
        for text in ["+1", ".5", "5.", "-", "e5", "1e", "1e+"] {
            #expect((try? scan(text).get()) == nil, "\(text)")
        }
        #expect(throws: DecimalNumber.Failure.leadingZero) { try scan("01").get() }
    }
}
