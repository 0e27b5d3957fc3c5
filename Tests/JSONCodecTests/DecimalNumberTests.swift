import Foundation
import JSONCodec
import TestSupport
import Testing

@Suite("decimal numbers", .timeLimit(.minutes(5)))
struct DecimalNumberTests {
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

    @Test("16 to 19 significant digits (the Eisel-Lemire path) read exactly as strtod reads them, ties to even")
    func longMantissas() {
        var random = SplitMix64(seed: 18)
        func check(_ text: String) -> Bool {
            let parsed = Array(text.utf8).withUnsafeBytes { bytes in
                try? DecimalNumber.scan(bytes, from: 0, grammar: .json)
            }
            let expected = Double(text)!
            #expect(parsed?.value.bitPattern == expected.bitPattern, "\(text)")
            return parsed?.value.bitPattern == expected.bitPattern
        }
        for round in 0..<300_000 {
            // A computed double written in full (15 to 17 digits), at magnitudes from 1e-60 to 1e60.
            let magnitude = Double(sign: .plus, exponent: Int(random.next() % 400) - 200, significand: 1)
            let value = Double.random(in: 1..<2, using: &random) * magnitude * (round % 2 == 0 ? 1 : -1)
            // 19 digits with a point anywhere, or an exponent from -64 to 45.
            let digits = String(random.next() % 9_000_000_000_000_000_000 + 1_000_000_000_000_000_000)
            let cut = Int(random.next() % 20)
            let pointed =
                cut == 0 ? "0." + digits : String(digits.prefix(cut)) + (cut < 19 ? "." + digits.dropFirst(cut) : "")
            let scaled = digits + "e" + String(Int(random.next() % 110) - 64 - 18)
            // Integers from 2^53 up: odd ones lie exactly halfway between two doubles or next to such a tie.
            let integer = String(
                random.next() % (10_000_000_000_000_000_000 - 9_007_199_254_740_992) + 9_007_199_254_740_992
            )
            for text in ["\(value)", pointed, scaled, integer, integer + ".0", integer + "0e-1"] where !check(text) {
                return
            }
        }
        for text in [
            "9007199254740993", "9007199254740995", "18014398509481985", "9223372036854775807", "0.1", "1e-64",
            "9999999999999999999e45",
        ] {
            guard check(text) else { return }
        }
    }

    @Test("digits read a word at a time: runs of every length, with leading zeros, before any following byte")
    func digitRuns() {
        var random = SplitMix64(seed: 7)
        // Just below and above the digits, a carry out of a byte (0xFA and up), and JSON's usual followers.
        let followers: [[UInt8]] = [
            [], [0x2F], [0x3A], [0xFA], [0xFF], Array(",\"x\":1}".utf8), Array("        ".utf8),
        ]
        for _ in 0..<20_000 {
            var whole = String(random.next() % 10_000_000_000)
            whole = String(whole.prefix(Int(random.next() % UInt64(whole.count)) + 1))
            let zeros = String(repeating: "0", count: Int(random.next() % 12))
            let fraction = String(String(random.next()).prefix(Int(random.next() % 21)))
            let lenientWhole = zeros + whole
            for text in [whole, whole + "." + zeros + (fraction.isEmpty ? "0" : fraction), lenientWhole] {
                let grammar: DecimalNumber.Grammar = text == lenientWhole && !zeros.isEmpty ? .lenient : .json
                for follower in followers {
                    let bytes = Array(text.utf8) + follower
                    let parsed = bytes.withUnsafeBytes { try? DecimalNumber.scan($0, from: 0, grammar: grammar) }
                    #expect(parsed?.value.bitPattern == Double(text)!.bitPattern, "\(text) then \(follower)")
                    #expect(parsed?.end == text.utf8.count, "\(text) then \(follower)")
                    if parsed?.value != Double(text) || parsed?.end != text.utf8.count { return }
                }
            }
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
