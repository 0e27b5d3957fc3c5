import Foundation
import GeoCore
import JSONCodec
import TestSupport
import Testing

/// The purpose-built decoder against Foundation's `JSONSerialization` plus the same field rules written independently
/// over its output.
///
/// For every input, both must agree: both refuse it, or both accept it and give the same position.
///
/// Known, deliberate differences:
/// - a trailing comma before `}` or `]`: Foundation accepts it, RFC 8259 does not (nor does geoworker);
/// - a number beyond Double's range in a member geoworker ignores: Foundation refuses the whole text,
///   geoworker ignores the member as it ignores any unknown one (RFC 8259 leaves number limits to
///   implementations, and a position is not bad input because of an unrelated extra field);
/// - Foundation's number parsing is not always correctly rounded (`-60.27139363854753` comes back one ULP
///   off, others two); geoworker's is, checked bit for bit against the standard library in
///   `numbersMatchStandardLibrary`, so here numbers are compared to within four ULPs;
/// - UTF-16 input, which Foundation detects and RFC 8259 forbids between systems (not generated here).
@Suite("Decoder against Foundation", .timeLimit(.minutes(5)))
struct DecoderDifferentialTests {
    @Test("hand-picked corpus of valid and invalid positions")
    func handPickedCorpus() {
        let corpus: [String] = [
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":-0,"lon":-0.0,"timestamp":"2026-11-21T10:00:00Z"}"#,
            #"{"deviceId":"a","lat":1E-7,"lon":179.99999999999999999,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":89.999999999999999999999999999,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"heading":360,"speed":0,"accuracy":0}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":1e400}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":12345678901234567890123}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":"2026-11-21T10:00:00.123+05:45"}"#,
            #"{"deviceId":"\u0000","lat":1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"\/\b\f\n\r\t\"\\","lat":1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":true,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":[]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["zh-Hant-TW","x-klingon"]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["-x"]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":[""]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":[null]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":[1,"fr"]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000}}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":[1,2,]}"#,
            #"{"deviceId":"a","lat":1.,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":.1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":+1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":tru}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":nul}"#,
            #"{'deviceId':"a","lat":1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":"\uD83D"}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":"\uDE00\uD83D"}"#,
            #"{"deviceId":"\uD83D\uDE00","lat":1,"lon":2,"timestamp":1795255200000}"#,
            #"{"deviceId":"a" "lat":1,"lon":2,"timestamp":1795255200000}"#,
            "{\"deviceId\":\"a\u{7F}\",\"lat\":1,\"lon\":2,\"timestamp\":1795255200000}",
            "{\"deviceId\":\"a\tb\",\"lat\":1,\"lon\":2,\"timestamp\":1795255200000}",
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":"2026-02-29T10:00:00Z"}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":"2026-11-21T10:00:60Z"}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":"1999-12-31T23:59:59.999Z"}"#,
            "  ", "null", "\"x\"", "{}", "[", "{\"deviceId\"}",
        ]
        let deliberate = corpus.filter { outcome(Array($0.utf8)) == .deliberateDifference }
        #expect(
            deliberate == [
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":1e400}"#,
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":[1,2,]}"#,
            ]
        )
    }

    @Test("numbers are correctly rounded, where Foundation is one ULP off")
    func correctlyRounded() throws {
        let text = #"{"deviceId":"a","lat":-60.27139363854753,"lon":2,"timestamp":1795255200000}"#
        let position = try decodePosition(text).get()
        // Swift prints the shortest text that reads back to the same double, so this is exact.
        #expect(position.coordinate.latitude == -60.27139363854753)
        #expect(position.coordinate.latitude.description == "-60.27139363854753")
        let foundation = try #require(ReferenceDecoder.position(Data(text.utf8)))
        #expect(foundation.coordinate.latitude == position.coordinate.latitude.nextDown, "Foundation's rounding error")
    }

    @Test("generated corpus: 20,000 random positions, layouts and mutations")
    func generatedCorpus() {
        var random = SplitMix64(seed: 0x6765_6F77_6F72_6B72)
        var accepted = 0
        var refused = 0
        var deliberate = 0
        for round in 0..<20_000 {
            var bytes = Array(PositionTextGenerator.position(&random).utf8)
            // Three in four inputs get mutated: a byte deleted, inserted, replaced, or the text cut short.
            if round % 4 != 0 { PositionTextGenerator.mutate(&bytes, &random) }
            switch outcome(bytes) {
            case .agreeAccepted: accepted += 1
            case .agreeRefused: refused += 1
            case .deliberateDifference: deliberate += 1
            case .disagree: return  // already recorded; one is enough to look at
            }
        }
        // Both sides of the comparison must be well exercised for the agreement to mean something.
        #expect(accepted > 3000, "accepted \(accepted)")
        #expect(refused > 3000, "refused \(refused)")
        #expect(deliberate < 500, "deliberate differences \(deliberate)")
    }

    @Test("numbers are parsed bit for bit as the standard library's correctly rounded parser does")
    func numbersMatchStandardLibrary() throws {
        var random = SplitMix64(seed: 42)
        for _ in 0..<50_000 {
            let text: String
            switch random.next(below: 5) {
            case 0: text = String(random.uniform(-90, 90))  // shortest round-trip form, up to 17 digits
            case 1: text = String(format: "%.\(random.next(below: 20))f", random.uniform(-90, 90))
            case 2: text = String(format: "%.\(random.next(below: 18))e", random.uniform(-90, 90))
            case 3:
                text =
                    "\(random.next(below: 90)).\(String(repeating: "0", count: random.next(below: 25)))\(random.next(below: 1_000_000))"
            default:
                text =
                    "\(1 + random.next(below: 9))\(String(repeating: "9", count: random.next(below: 30)))e-\(random.next(below: 40))"
            }
            guard let expected = Double(text), (-90...90).contains(expected) else { continue }
            let position = try decodePosition(#"{"deviceId":"a","lat":\#(text),"lon":0,"timestamp":1795255200000}"#)
                .get()
            #expect(position.coordinate.latitude.bitPattern == expected.bitPattern, "\(text)")
            if position.coordinate.latitude.bitPattern != expected.bitPattern { return }
        }
    }

    enum Outcome { case agreeAccepted, agreeRefused, deliberateDifference, disagree }

    func outcome(_ bytes: [UInt8]) -> Outcome {
        let ours = bytes.withUnsafeBytes { Position.decode(json: $0) }
        let reference = ReferenceDecoder.position(Data(bytes))
        let text = String(decoding: bytes, as: UTF8.self)
        switch (ours, reference) {
        case (.success(let mine), .some(let theirs)):
            let same = mine.matches(theirs)
            #expect(same, "different positions from \(text): \(mine) vs \(theirs)")
            return same ? .agreeAccepted : .disagree
        case (.failure, .none):
            return .agreeRefused
        case (.failure(let failure), .some):
            if failure.reason == .invalidJSON && ReferenceDecoder.hasTrailingComma(bytes) {
                return .deliberateDifference
            }
            Issue.record("refused what Foundation accepts: \(failure) in \(text)")
            return .disagree
        case (.success(let mine), .none):
            if ReferenceDecoder.hasOverflowingNumber(text) { return .deliberateDifference }
            Issue.record("accepted what Foundation refuses: \(mine) from \(text)")
            return .disagree
        }
    }
}

/// The field rules of a position, written again over `JSONSerialization`'s output.
enum ReferenceDecoder {
    static func position(_ data: Data) -> Position? {
        guard let object = try? JSONSerialization.jsonObject(with: data), let fields = object as? [String: Any] else {
            return nil
        }
        guard let deviceId = fields["deviceId"] as? String, !deviceId.isEmpty, deviceId.utf8.count <= 256,
            let latitude = number(fields["lat"]), (-90...90).contains(latitude),
            let longitude = number(fields["lon"]), (-180...180).contains(longitude),
            let timestamp = timestamp(fields["timestamp"]),
            let accuracy = optionalNumber(fields["accuracy"], in: 0...Double.greatestFiniteMagnitude),
            let speed = optionalNumber(fields["speed"], in: 0...Double.greatestFiniteMagnitude),
            let heading = optionalNumber(fields["heading"], in: 0...360),
            let languages = languages(fields["languages"])
        else { return nil }
        return Position(
            deviceId: deviceId,
            coordinate: Coordinate(latitude: latitude, longitude: longitude)!,
            timestamp: timestamp,
            accuracy: accuracy,
            speed: speed,
            heading: heading,
            languages: languages
        )
    }

    /// A JSON number (not a boolean, which Foundation also hands back as NSNumber), finite.
    static func number(_ value: Any?) -> Double? {
        guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else { return nil }
        let double = number.doubleValue
        return double.isFinite ? double : nil
    }

    /// `.some(.none)` for absent or null, `.some(value)` in range, nil when invalid.
    static func optionalNumber(_ value: Any?, in range: ClosedRange<Double>) -> Double?? {
        if value == nil || value is NSNull { return .some(nil) }
        guard let number = number(value), range.contains(number) else { return nil }
        return .some(number)
    }

    static func timestamp(_ value: Any?) -> Int64? {
        let milliseconds: Int64
        if let text = value as? String {
            guard let parsed = rfc3339(text) else { return nil }
            milliseconds = parsed
        } else if let number = number(value), number.rounded() == number, abs(number) < 1e17 {
            milliseconds = Int64(number)
        } else {
            return nil
        }
        return (946_684_800_000...253_402_300_799_999).contains(milliseconds) ? milliseconds : nil
    }

    /// RFC 3339 by pattern, with the date checked by Foundation's Gregorian calendar.
    static func rfc3339(_ text: String) -> Int64? {
        let pattern = #"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$"#
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text))
        else { return nil }
        func group(_ index: Int) -> String? {
            Range(match.range(at: index), in: text).map { String(text[$0]) }
        }
        let values = (1...6).map { Int(group($0)!)! }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let leapSecond = values[5] == 60
        let components = DateComponents(
            year: values[0],
            month: values[1],
            day: values[2],
            hour: values[3],
            minute: values[4],
            second: leapSecond ? 59 : values[5]
        )
        guard values[3] <= 23, values[4] <= 59, values[5] <= 60, components.isValidDate(in: calendar),
            let date = calendar.date(from: components)
        else { return nil }
        var milliseconds = Int64(date.timeIntervalSince1970.rounded()) * 1000 + (leapSecond ? 1000 : 0)
        if let fraction = group(7) {
            milliseconds += Int64(String((fraction.dropFirst() + "00").prefix(3)))!
        }
        let zone = group(8)!
        if zone != "Z" && zone != "z" {
            let hours = Int(zone.dropFirst().prefix(2))!
            let minutes = Int(zone.suffix(2))!
            guard hours <= 23, minutes <= 59 else { return nil }
            milliseconds -= Int64((zone.hasPrefix("-") ? -1 : 1) * (hours * 60 + minutes)) * 60_000
        }
        return milliseconds
    }

    static func languages(_ value: Any?) -> [String]? {
        if value == nil || value is NSNull { return [] }
        guard let tags = value as? [Any], tags.count <= 16 else { return nil }
        var result: [String] = []
        for tag in tags {
            guard let text = tag as? String, (1...35).contains(text.utf8.count), !text.hasPrefix("-"),
                text.unicodeScalars.allSatisfy({ $0 == "-" || ($0.isASCII && CharacterSet.alphanumerics.contains($0)) })
            else { return nil }
            result.append(text)
        }
        return result
    }

    /// A number literal too large for a Double: Foundation refuses any text holding one.
    static func hasOverflowingNumber(_ text: String) -> Bool {
        let regex = try! NSRegularExpression(pattern: #"-?\d+(\.\d+)?([eE][+-]?\d+)?"#)
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).contains { match in
            Range(match.range, in: text).flatMap { Double(text[$0]) }?.isInfinite ?? false
        }
    }

    /// A `,` followed (after whitespace) by `}` or `]` outside strings: the leniency Foundation allows.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var inString = false
        var escaped = false
        var lastSignificant: UInt8 = 0
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == 0x5C {
                    escaped = true
                } else if byte == 0x22 {
                    inString = false
                }
                continue
            }
            switch byte {
            case 0x22: inString = true
            case 0x7D,
                0x5D where lastSignificant == 0x2C:
                return true
            default: break
            }
            if ![0x20, 0x09, 0x0A, 0x0D].contains(byte) { lastSignificant = byte }
        }
        return false
    }
}

extension Position {
    /// Equal, but numbers may differ by a few ULPs (Foundation's rounding errors).
    func matches(_ other: Position) -> Bool {
        func near(_ a: Double?, _ b: Double?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return abs(a - b) <= 4 * a.ulp
        }
        return deviceId == other.deviceId && timestamp == other.timestamp && languages == other.languages
            && near(coordinate.latitude, other.coordinate.latitude)
            && near(coordinate.longitude, other.coordinate.longitude)
            && near(accuracy, other.accuracy) && near(speed, other.speed) && near(heading, other.heading)
    }
}

/// Random position texts in varied but valid layouts, and random damage to them.
enum PositionTextGenerator {
    static func position(_ random: inout SplitMix64) -> String {
        var members: [String] = []
        let id = ["truck-\(random.next(below: 1000))", "tr\\u00fcck", "a\\\"b", "😀-\(random.next(below: 9))", "", "x"][
            random.next(below: 6)
        ]
        if random.next(below: 20) != 0 { members.append(#""deviceId":"\#(id)""#) }
        if random.next(below: 20) != 0 { members.append(#""lat":\#(number(random.uniform(-95, 95), &random))"#) }
        if random.next(below: 20) != 0 { members.append(#""lon":\#(number(random.uniform(-185, 185), &random))"#) }
        if random.next(below: 20) != 0 { members.append(#""timestamp":\#(timestamp(&random))"#) }
        if random.next(below: 2) == 0 { members.append(#""accuracy":\#(number(random.uniform(-5, 100), &random))"#) }
        if random.next(below: 3) == 0 {
            members.append(
                #""speed":\#(random.next(below: 10) == 0 ? "null" : number(random.uniform(-1, 40), &random))"#
            )
        }
        if random.next(below: 3) == 0 { members.append(#""heading":\#(number(random.uniform(-10, 370), &random))"#) }
        if random.next(below: 3) == 0 {
            let tags = ["fr-BE", "en", "de-CH", "zh-Hant-TW", "fr_BE", "", "x"].shuffled(using: &random).prefix(
                random.next(below: 4)
            )
            members.append(#""languages":[\#(tags.map { "\"\($0)\"" }.joined(separator: ","))]"#)
        }
        if random.next(below: 3) == 0 { members.append(#""extra":{"a":[1,2.5e3,null,true],"b":"\\n"}"#) }
        members.shuffle(using: &random)
        let spaces = [" ", "", "\n", "\t", "  "]
        func space() -> String { spaces[random.next(below: spaces.count)] }
        return space() + "{" + members.map { space() + $0 + space() }.joined(separator: ",") + "}" + space()
    }

    static func number(_ value: Double, _ random: inout SplitMix64) -> String {
        switch random.next(below: 4) {
        case 0: return String(value)
        case 1: return String(format: "%.6e", value)
        case 2: return String(format: "%.3f", value)
        default: return String(Int(value))
        }
    }

    static func timestamp(_ random: inout SplitMix64) -> String {
        let milliseconds = Int64(random.uniform(900_000_000_000, 1_900_000_000_000))
        switch random.next(below: 3) {
        case 0: return String(milliseconds)
        case 1: return "\"\(Timestamp.rfc3339(milliseconds))\""
        default:
            let date = Date(timeIntervalSince1970: Double(milliseconds / 1000))
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(secondsFromGMT: [0, 3600, -19800, 20700][random.next(below: 4)])
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssxxx"
            return "\"\(formatter.string(from: date))\""
        }
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        guard !bytes.isEmpty else { return }
        let alphabet = Array("{}[],:\"\\0123456789-+.eEtrufalsn ".utf8) + [0xFF, 0xC3, 0x00, 0x0A]
        let index = random.next(below: bytes.count)
        switch random.next(below: 4) {
        case 0: bytes.remove(at: index)
        case 1: bytes.insert(alphabet[random.next(below: alphabet.count)], at: index)
        case 2: bytes[index] = alphabet[random.next(below: alphabet.count)]
        default: bytes.removeSubrange(index...)
        }
    }
}
