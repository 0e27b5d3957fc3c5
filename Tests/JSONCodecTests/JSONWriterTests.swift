import Foundation
import JSONCodec
import TestSupport
import Testing

/// The writer's numbers and times are what every event carries: they must read back to the same value and
/// be written the same way whichever path wrote them.
@Suite("JSON writer: numbers and times", .timeLimit(.minutes(5)))
struct JSONWriterTests {
    /// What the writer wrote before its fast paths: integers as integers, everything else as `description`.
    static func reference(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : value.description
    }

    static func written(_ value: Double) -> String {
        var writer = JSONWriter()
        writer.number(value)
        return String(decoding: writer.takeOutput(), as: UTF8.self)
    }

    @Test("numbers are written in their shortest form that reads back, as description writes them")
    func numbers() {
        var random = SplitMix64(seed: 18)
        var values: [Double] = [
            0.0001, 0.00009999, 0.0001000001, 0.1, 0.2, 0.1 + 0.2, 0.5, 1.5, 2.675, 12.5, 48.8566, -48.8566,
            999_999.999999999, 999_999.9999999999, 1e6 - 1e-9, 1e6, 1e6 + 0.5, 123_456.789, 0.123456789,
            0.1234567891, -0.0, 0, 1e-5, Double.leastNonzeroMagnitude, 1e15 + 0.5, 9_007_199_254_740_992, -179.9999999,
            89.123456789,
            -1, -7, 42, 123_456_789_012_345, -999_999_999_999_999, 1e15 - 1, 1e15,
        ]
        for _ in 0..<200_000 {
            let magnitude = [1e-5, 1e-3, 1, 10, 180, 1e4, 1e6, 1e7][Int(random.next() % 8)]
            let raw = Double.random(in: -magnitude...magnitude, using: &random)
            // As devices send them (up to 12 decimals), and computed (all 17 digits).
            let decimals = Int(random.next() % 14)
            values.append(
                decimals == 13 ? raw : (raw * pow(10, Double(decimals))).rounded() / pow(10, Double(decimals))
            )
        }
        var mismatches: [String] = []
        for value in values where Self.written(value) != Self.reference(value) {
            mismatches.append("\(value): \(Self.written(value)) instead of \(Self.reference(value))")
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
        #expect(values.allSatisfy { Double(Self.written($0)) == $0 || ($0 == 0 && Self.written($0) == "0") })
    }

    @Test("numbers of every magnitude, the longest texts included, are written as description writes them")
    func numbersOfEveryMagnitude() {
        var random = SplitMix64(seed: 19)
        var values: [Double] = [
            -2.2250738585072014e-308, -.greatestFiniteMagnitude, .greatestFiniteMagnitude, -.leastNonzeroMagnitude,
            -.leastNormalMagnitude, 1.7976931348623157e308, -1.2345678901234567e-100, 1e16, 1e-7, 0.1 + 0.7,
        ]
        for _ in 0..<300_000 {
            let value = Double(bitPattern: random.next())
            if value.isFinite { values.append(value) }
        }
        var mismatches: [String] = []
        for value in values where Self.written(value) != Self.reference(value) {
            mismatches.append("\(Self.reference(value)): \(Self.written(value))")
        }
        #expect(mismatches.count == 0, "\(mismatches.prefix(10))")
    }

    /// The text the writer gave times before it wrote them at once: each field digit by digit.
    static func referenceTime(_ milliseconds: Int64) -> String {
        let clamped = min(max(milliseconds, RFC3339.first), RFC3339.last)
        let days = clamped >= 0 ? clamped / 86_400_000 : (clamped - 86_399_999) / 86_400_000
        let ms = clamped - days * 86_400_000
        let (year, month, day) = RFC3339.civilFromDays(days)
        let seconds = Int(ms / 1000)
        func pad(_ value: Int, _ count: Int) -> String {
            String(repeating: "0", count: max(0, count - String(value).count)) + String(value)
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):"
            + "\(pad(seconds % 60, 2)).\(pad(Int(ms % 1000), 3))Z"
    }

    @Test("times are written as RFC 3339 with milliseconds over the whole range, clamped beyond it")
    func times() {
        var random = SplitMix64(seed: 24)
        var instants: [Int64] = [
            0, -1, 1, 999, 86_399_999, RFC3339.first, RFC3339.last, RFC3339.first - 1,
            RFC3339.last + 1, .min, .max, 1_795_000_000_123,
        ]
        for _ in 0..<100_000 {
            instants.append(Int64.random(in: RFC3339.first...RFC3339.last, using: &random))
        }
        let mismatches = instants.filter { RFC3339.string($0) != Self.referenceTime($0) }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5).map { "\($0): \(RFC3339.string($0))" })")
        #expect(RFC3339.string(1_795_000_000_123) == "2026-11-18T11:06:40.123Z")
        #expect(RFC3339.string(.min) == "0000-01-01T00:00:00.000Z")
        #expect(RFC3339.string(.max) == "9999-12-31T23:59:59.999Z")
    }
}
