import JSONCodec

/// Timestamps in messages: RFC 3339 text or integer epoch milliseconds, held as milliseconds since the Unix epoch.
///
/// Sub-millisecond digits are dropped (Kafka's own timestamps are milliseconds too).
public enum Timestamp {
    /// The earliest timestamp accepted: 2000-01-01T00:00:00Z.
    ///
    /// Anything earlier is far more likely a mistake (epoch *seconds* sent as milliseconds) than a real fix.
    public static let earliest: Int64 = 946_684_800_000
    /// The latest timestamp accepted: 9999-12-31T23:59:59.999Z, the last RFC 3339 can write.
    public static let latest: Int64 = RFC3339.last
    /// The first instant RFC 3339 can write: 0000-01-01T00:00:00Z.
    public static let firstWritable: Int64 = RFC3339.first

    /// Parses RFC 3339 `date-time` text (`2026-11-21T10:00:00Z`, `…T11:00:00.250+01:00`; `T` and `Z` in either case; a
    /// leap second `:60` counts as the next minute's first second).
    ///
    /// Returns nil for anything else, and for an instant that falls outside the years 0000 to 9999 once its offset is
    /// applied (`9999-12-31T23:59:60Z`, `0000-01-01T00:00:00+01:00`): RFC 3339 could not write it.
    public static func parseRFC3339(_ text: UnsafeRawBufferPointer) -> Int64? { RFC3339.parse(text) }

    /// Appends `milliseconds` as RFC 3339 UTC text with milliseconds: `2026-11-21T10:00:00.000Z`.
    ///
    /// An instant outside the years 0000 to 9999 (a Kafka timestamp can be any 64-bit value) is written as the nearest
    /// one RFC 3339 can write, so the text is always valid.
    public static func appendRFC3339(_ milliseconds: Int64, to output: inout [UInt8]) {
        RFC3339.append(milliseconds, to: &output)
    }

    /// `milliseconds` as RFC 3339 UTC text with milliseconds.
    public static func rfc3339(_ milliseconds: Int64) -> String { RFC3339.string(milliseconds) }
}
