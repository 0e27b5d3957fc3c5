/// The project's one reader of decimal numbers in text: JSON numbers (``JSONScanner``) and the degrees of a
/// `lat,lon` line (``Coordinate/init(latLon:)``), read straight from the bytes with no String in between.
///
/// Correctly rounded: a mantissa of up to 15 digits scaled by an exactly representable power of ten (every
/// coordinate a GPS receiver reports) takes Clinger's fast path, one multiplication or division; up to 19
/// digits and a power of ten within 10^-64...10^64 (a computed double written in full) the Eisel-Lemire
/// path (``eiselLemire(_:exponent:)``); anything else the standard library's correctly rounded parser.
package enum DecimalNumber {
    /// Which texts are numbers.
    package enum Grammar {
        /// RFC 8259: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
        case json
        /// What people write in a text file as well: also a leading `+`, leading zeros, and a point with
        /// digits on one side only (`.5`, `5.`).
        case lenient
    }

    package enum Failure: Error {
        case invalid
        /// JSON only: `01`.
        case leadingZero
    }

    /// Reads the number that starts at `start` in `bytes`; returns its value and the offset just past it.
    ///
    /// What follows the number is left to the caller.
    @inline(__always)
    package static func scan(
        _ bytes: UnsafeRawBufferPointer,
        from start: Int,
        grammar: Grammar
    ) throws(Failure) -> (value: Double, end: Int) {
        var position = start
        let count = bytes.count
        var negative = false
        if position < count {
            if bytes[position] == UInt8(ascii: "-") {
                negative = true
                position += 1
            } else if grammar == .lenient && bytes[position] == UInt8(ascii: "+") {
                position += 1
            }
        }
        var mantissa: UInt64 = 0
        // Significant digits seen (leading zeros are not significant) and the power of ten they are off by.
        var digits = 0
        var exponent = 0
        // Whether digits past the 19th were left out of `mantissa`.
        var dropped = false
        let integerStart = position
        if grammar == .json && position < count && bytes[position] == UInt8(ascii: "0") {
            position += 1
            if position < count && isDigit(bytes[position]) { throw .leadingZero }
        } else {
            position = readWords(of: bytes, from: position, into: &mantissa, digits: &digits)
            while position < count && isDigit(bytes[position]) {
                let digit = UInt64(bytes[position] &- UInt8(ascii: "0"))
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ digit
                    if mantissa != 0 { digits += 1 }
                } else {
                    exponent += 1
                    dropped = true
                }
                position += 1
            }
        }
        var hasDigits = position > integerStart
        // JSON wants digits before a point; a lenient number may start with the point.
        guard hasDigits || grammar == .lenient else { throw .invalid }
        if position < count && bytes[position] == UInt8(ascii: ".") {
            position += 1
            let fractionStart = position
            position = readWords(of: bytes, from: position, into: &mantissa, digits: &digits)
            exponent -= position - fractionStart
            while position < count && isDigit(bytes[position]) {
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[position] &- UInt8(ascii: "0"))
                    exponent -= 1
                    if mantissa != 0 { digits += 1 }
                } else {
                    dropped = true
                }
                position += 1
            }
            let hasFraction = position > fractionStart
            guard hasFraction || (grammar == .lenient && hasDigits) else { throw .invalid }
            hasDigits = hasDigits || hasFraction
        }
        guard hasDigits else { throw .invalid }
        if position < count && (bytes[position] | 0x20) == UInt8(ascii: "e") {
            position += 1
            var exponentNegative = false
            if position < count && (bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-")) {
                exponentNegative = bytes[position] == UInt8(ascii: "-")
                position += 1
            }
            guard position < count, isDigit(bytes[position]) else { throw .invalid }
            var explicitExponent = 0
            while position < count && isDigit(bytes[position]) {
                if explicitExponent < 100_000 {
                    explicitExponent = explicitExponent * 10 + Int(bytes[position] &- UInt8(ascii: "0"))
                }
                position += 1
            }
            exponent += exponentNegative ? -explicitExponent : explicitExponent
        }
        if digits <= 15 && exponent >= -22 && exponent <= 22 {
            var value = Double(mantissa)
            value = exponent < 0 ? value / powersOfTen[-exponent] : value * powersOfTen[exponent]
            return (negative ? -value : value, position)
        }
        if !dropped, let value = eiselLemire(mantissa, exponent: exponent) {
            return (negative ? -value : value, position)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let value = Double(text) else { throw .invalid }
        return (value, position)
    }

    @inline(__always)
    package static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

    /// Reads the digits at `start` eight at a time into `mantissa` while eight bytes are left to load and the
    /// mantissa takes them all (at most 19 significant `digits`); returns where it stopped, the byte-wise loop to
    /// go on from there (with the rest of a run, its last few bytes, or the digits past the 19th).
    ///
    /// The same result as that loop's; a coordinate's six or seven decimals are most of the bytes a position holds.
    @inline(__always)
    private static func readWords(
        of bytes: UnsafeRawBufferPointer,
        from start: Int,
        into mantissa: inout UInt64,
        digits: inout Int
    ) -> Int {
        var position = start
        while bytes.count - position >= 8 {
            let word = bytes.word(at: position)
            // A byte is a digit when its high half is 3 and stays 3 with 6 added (0x30...0x39). The addition's carry
            // out of a byte of 0xFA or more reaches only bytes above that non-digit: the lowest one found is exact.
            let highHalves: UInt64 = 0xF0F0_F0F0_F0F0_F0F0
            let threes: UInt64 = 0x3030_3030_3030_3030
            let nonDigits = ((word & highHalves) ^ threes) | (((word &+ 0x0606_0606_0606_0606) & highHalves) ^ threes)
            let run = nonDigits == 0 ? 8 : nonDigits.trailingZeroBitCount / 8
            guard run > 0, digits + run <= 19 else { return position }
            let values = (word &- threes) & .lowBytes(run)
            if mantissa == 0 {
                // Leading zeros are not significant: the run's digits from its first non-zero one are.
                digits += values == 0 ? 0 : run - values.trailingZeroBitCount / 8
            } else {
                digits += run
            }
            mantissa = mantissa &* wholePowersOfTen[run] &+ value(ofDigits: values, count: run)
            position += run
            if run < 8 { return position }
        }
        return position
    }

    /// The number that `count` (1 to 8) digit values, one a byte from the lowest, write.
    @inline(__always)
    private static func value(ofDigits values: UInt64, count: Int) -> UInt64 {
        // Moved up to the word's top: the bytes below become leading zeros. Then pairs, fours and eights of digits
        // are joined by multiplication within their lanes.
        var lanes = values << (UInt64(8 - count) * 8)
        lanes = (lanes &* 10 &+ (lanes >> 8)) & 0x00FF_00FF_00FF_00FF
        lanes = (lanes &* 100 &+ (lanes >> 16)) & 0x0000_FFFF_0000_FFFF
        return (lanes &* 10_000 &+ (lanes >> 32)) & 0xFFFF_FFFF
    }

    private static let wholePowersOfTen: [UInt64] = [
        1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
    ]

    /// The powers of ten from 10^0 to 10^22, each exactly representable as a Double.
    ///
    /// Written out: a literal array is laid out when the program loads, with no lazy initialisation to check at each
    /// number.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
        1e20, 1e21, 1e22,
    ]
}
