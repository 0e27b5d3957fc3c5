import GeoCore
import Testing

@Suite("Timestamps", .timeLimit(.minutes(5)))
struct TimestampTests {
    /// 2026-11-21T10:00:00Z in milliseconds since the epoch.
    static let tenOClock: Int64 = 1_795_255_200_000

    @Test(
        "RFC 3339 text is parsed to epoch milliseconds",
        arguments: [
            ("2026-11-21T10:00:00Z", tenOClock),
            ("2026-11-21t10:00:00z", tenOClock),
            ("2026-11-21T10:00:00.5Z", tenOClock + 500),
            ("2026-11-21T10:00:00.123456789Z", tenOClock + 123),  // sub-millisecond digits dropped
            ("2026-11-21T11:00:00+01:00", tenOClock),
            ("2026-11-21T04:30:00-05:30", tenOClock),
            ("2026-11-21T10:00:00.250+00:00", tenOClock + 250),
            ("2026-11-21T09:59:60Z", tenOClock),  // a leap second counts as the next minute's first
            ("2028-02-29T00:00:00Z", 1_835_395_200_000),  // leap day
            ("2000-01-01T00:00:00Z", 946_684_800_000),
            ("1970-01-01T00:00:00Z", 0),
        ]
    )
    func parses(text: String, expected: Int64) {
        let parsed = Array(text.utf8).withUnsafeBytes { Timestamp.parseRFC3339($0) }
        #expect(parsed == expected)
    }

    @Test(
        "anything that is not RFC 3339 date-time is refused",
        arguments: [
            "2026-11-21", "2026-11-21T10:00:00", "2026-11-21 10:00:00Z", "2026-11-21T10:00Z", "2026-02-29T10:00:00Z",
            "2026-13-01T10:00:00Z", "2026-11-31T10:00:00Z", "2026-11-21T24:00:00Z", "2026-11-21T10:60:00Z",
            "2026-11-21T10:00:61Z", "2026-11-21T10:00:00.Z", "2026-11-21T10:00:00+1:00", "2026-11-21T10:00:00+01:00x",
            "26-11-21T10:00:00Z", "2026-11-21T10:00:00+24:00", "", "now",
            // Found by fuzzing: instants beyond the years RFC 3339 can write once the offset or leap second
            // is applied; their text could not be written back.
            "9999-12-31T23:59:60.9Z", "9999-12-31T23:30:00-01:00", "0000-01-01T00:00:00+00:01",
        ]
    )
    func refuses(text: String) {
        #expect(Array(text.utf8).withUnsafeBytes { Timestamp.parseRFC3339($0) } == nil)
    }

    @Test(
        "formatting gives RFC 3339 UTC with milliseconds, and parses back",
        arguments: [0, 946_684_800_000, tenOClock + 7, 253_402_300_799_999]
    )
    func roundTrip(milliseconds: Int64) {
        let text = Timestamp.rfc3339(milliseconds)
        #expect(text.hasSuffix("Z") && text.count == 24)
        #expect(Array(text.utf8).withUnsafeBytes { Timestamp.parseRFC3339($0) } == milliseconds)
    }

    @Test(
        "an instant RFC 3339 cannot write (a Kafka timestamp may be any 64-bit value) is written as the nearest it can",
        arguments: [
            (Int64.max, "9999-12-31T23:59:59.999Z"), (253_402_300_800_000, "9999-12-31T23:59:59.999Z"),
            (Int64.min, "0000-01-01T00:00:00.000Z"), (-62_167_219_200_001, "0000-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
        ]
    )
    func clampsToWhatItCanWrite(milliseconds: Int64, text: String) {
        #expect(Timestamp.rfc3339(milliseconds) == text)
    }

    @Test("the example instant formats as expected")
    func knownText() {
        #expect(Timestamp.rfc3339(Self.tenOClock + 42) == "2026-11-21T10:00:00.042Z")
    }
}
