/// RFC 3339 `date-time` text for instants held as milliseconds since the Unix epoch: parsed from bytes, written into
/// a buffer, with no Foundation and no String on the way.
package enum RFC3339 {
    /// The first instant RFC 3339 can write: 0000-01-01T00:00:00Z.
    package static let first: Int64 = -62_167_219_200_000
    /// The last instant RFC 3339 can write: 9999-12-31T23:59:59.999Z.
    package static let last: Int64 = 253_402_300_799_999

    /// Parses RFC 3339 `date-time` text (`2026-11-21T10:00:00Z`, `…T11:00:00.250+01:00`; `T` and `Z` in either case; a
    /// leap second `:60` counts as the next minute's first second).
    ///
    /// Returns nil for anything else, and for an instant that falls outside the years 0000 to 9999 once its offset is
    /// applied (`9999-12-31T23:59:60Z`, `0000-01-01T00:00:00+01:00`): RFC 3339 could not write it.
    package static func parse(_ text: UnsafeRawBufferPointer) -> Int64? {
        var reader = DigitReader(text)
        guard let year = reader.number(digits: 4), reader.skip("-"),
            let month = reader.number(digits: 2), reader.skip("-"),
            let day = reader.number(digits: 2), reader.skip("T") || reader.skip("t"),
            let hour = reader.number(digits: 2), reader.skip(":"),
            let minute = reader.number(digits: 2), reader.skip(":"),
            let second = reader.number(digits: 2)
        else { return nil }
        guard (1...12).contains(month), (1...daysInMonth(month, year: year)).contains(day), hour <= 23,
            minute <= 59, second <= 60
        else { return nil }
        var milliseconds: Int64 = 0
        if reader.skip(".") {
            var scale: Int64 = 100
            var fractionDigits = 0
            while let digit = reader.digit() {
                milliseconds += Int64(digit) * scale
                scale /= 10
                fractionDigits += 1
            }
            guard fractionDigits > 0 else { return nil }
        }
        var offsetMinutes = 0
        if reader.skip("Z") || reader.skip("z") {
            offsetMinutes = 0
        } else {
            let sign: Int
            if reader.skip("+") {
                sign = 1
            } else if reader.skip("-") {
                sign = -1
            } else {
                return nil
            }
            guard let offsetHour = reader.number(digits: 2), reader.skip(":"),
                let offsetMinute = reader.number(digits: 2),
                offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetMinutes = sign * (offsetHour * 60 + offsetMinute)
        }
        guard reader.isAtEnd else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second - offsetMinutes * 60)
        let instant = seconds * 1000 + milliseconds
        return (first...last).contains(instant) ? instant : nil
    }

    /// Writes `milliseconds` as RFC 3339 UTC text with milliseconds: `2026-11-21T10:00:00.000Z`.
    ///
    /// An instant outside the years 0000 to 9999 (a Kafka timestamp can be any 64-bit value) is written as the nearest
    /// one RFC 3339 can write, so the text is always valid.
    package static func append(_ milliseconds: Int64, to output: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: length) { text in
            write(milliseconds, to: text.baseAddress!)
            output.append(contentsOf: UnsafeBufferPointer(text))
        }
    }

    /// The length of the text ``write(_:to:)`` writes.
    package static let length = 24

    /// Writes the text ``append(_:to:)`` appends into the ``length`` bytes at `text`.
    package static func write(_ milliseconds: Int64, to text: UnsafeMutablePointer<UInt8>) {
        let milliseconds = min(max(milliseconds, first), last)
        let (days, dayMilliseconds) = milliseconds.quotientAndRemainderFlooring(dividingBy: 86_400_000)
        let (year, month, day) = civilFromDays(days)
        let millisecondsOfDay = Int(dayMilliseconds)
        let secondsOfDay = millisecondsOfDay / 1000
        // Each digit by a division by a constant (one by a divisor known only at run time cost more than the rest).
        func twoDigits(_ value: Int, at index: Int) {
            text[index] = UInt8(ascii: "0") + UInt8(value / 10)
            text[index + 1] = UInt8(ascii: "0") + UInt8(value % 10)
        }
        twoDigits(year / 100, at: 0)
        twoDigits(year % 100, at: 2)
        text[4] = UInt8(ascii: "-")
        twoDigits(month, at: 5)
        text[7] = UInt8(ascii: "-")
        twoDigits(day, at: 8)
        text[10] = UInt8(ascii: "T")
        twoDigits(secondsOfDay / 3600, at: 11)
        text[13] = UInt8(ascii: ":")
        twoDigits(secondsOfDay / 60 % 60, at: 14)
        text[16] = UInt8(ascii: ":")
        twoDigits(secondsOfDay % 60, at: 17)
        text[19] = UInt8(ascii: ".")
        let millisecond = millisecondsOfDay % 1000
        text[20] = UInt8(ascii: "0") + UInt8(millisecond / 100)
        twoDigits(millisecond % 100, at: 21)
        text[23] = UInt8(ascii: "Z")
    }

    /// `milliseconds` as RFC 3339 UTC text with milliseconds.
    package static func string(_ milliseconds: Int64) -> String {
        var output: [UInt8] = []
        append(milliseconds, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func isLeapYear(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Int64(era * 146_097 + dayOfEra - 719_468)
    }

    /// The proleptic Gregorian date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
    package static func civilFromDays(_ days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = Int(days) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

/// Reads fixed-width decimal fields and separators from text.
private struct DigitReader {
    let text: UnsafeRawBufferPointer
    var position = 0

    init(_ text: UnsafeRawBufferPointer) { self.text = text }

    var isAtEnd: Bool { position == text.count }

    mutating func digit() -> Int? {
        guard position < text.count, text[position] >= UInt8(ascii: "0"), text[position] <= UInt8(ascii: "9") else {
            return nil
        }
        defer { position += 1 }
        return Int(text[position] - UInt8(ascii: "0"))
    }

    mutating func number(digits: Int) -> Int? {
        var value = 0
        for _ in 0..<digits {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard position < text.count, text[position] == UInt8(ascii: character) else { return false }
        position += 1
        return true
    }
}

extension Int64 {
    /// Quotient and remainder rounding toward minus infinity, so that times before the epoch format right.
    fileprivate func quotientAndRemainderFlooring(dividingBy divisor: Int64) -> (Int64, Int64) {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
