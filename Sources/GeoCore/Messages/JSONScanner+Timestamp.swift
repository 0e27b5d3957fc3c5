import JSONCodec

extension JSONScanner {
    /// Reads a timestamp member: RFC 3339 text or integer epoch milliseconds, within ``Timestamp/earliest``
    /// and ``Timestamp/latest``.
    mutating func timestampField() throws(DecodingFailure) -> JSONField<Int64> {
        if try consumeNull() { return .absent }
        let milliseconds: Int64
        if let raw = try readRawString() {
            guard let parsed = withContent(of: raw, Timestamp.parseRFC3339) else {
                return .invalid("must be RFC 3339 date-time text (such as 2026-11-21T10:00:00Z) or epoch milliseconds")
            }
            milliseconds = parsed
        } else if let number = try readNumber() {
            guard number.isFinite, number.rounded() == number, abs(number) < 1e17 else {
                return .invalid("must be a whole number of milliseconds since the epoch")
            }
            milliseconds = Int64(number)
        } else {
            return try invalidField("must be RFC 3339 date-time text or epoch milliseconds")
        }
        guard milliseconds >= Timestamp.earliest else {
            return .invalid("is before 2000-01-01 (epoch timestamps are in milliseconds, not seconds)")
        }
        guard milliseconds <= Timestamp.latest else { return .invalid("is after 9999-12-31") }
        return .present(milliseconds)
    }
}
