/// A cursor over JSON text (RFC 8259, UTF-8) that decoders drive field by field.
///
/// Purpose-built for speed: it works on the message bytes in place, allocates only for the strings it
/// returns, and skips unknown values while still checking them, so that anything it accepts is valid
/// JSON. It is strict where RFC 8259 is: no trailing commas, no leading zeros, no control characters or
/// invalid UTF-8 in strings, no lone surrogates. A UTF-8 byte order mark is ignored.
package struct JSONScanner {
    /// Objects and arrays nest at most this deep (as Foundation's parser allows).
    package static let maximumDepth = 512

    package let bytes: UnsafeRawBufferPointer
    package private(set) var position = 0

    package init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { position = 3 }
    }

    /// A member name, located in the input.
    ///
    /// Names without escapes (nearly all) are compared in place.
    package struct Key {
        package let start: Int
        package let end: Int
        package let hasEscapes: Bool
    }

    // MARK: Structure

    /// Fails unless only whitespace is left.
    package mutating func expectEnd() throws(DecodingFailure) {
        skipWhitespace()
        guard position == bytes.count else { throw syntaxError("unexpected data after the JSON value") }
    }

    /// Consumes `{`; returns false when the value there is something else (nothing consumed).
    package mutating func enterObject() throws(DecodingFailure) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end of input") }
        guard bytes[position] == UInt8(ascii: "{") else { return false }
        position += 1
        return true
    }

    /// Reads the next member name and its `:`, or returns nil at the object's closing `}`.
    ///
    /// `first` says whether this is the first member (no comma before it).
    package mutating func nextKey(first: Bool) throws(DecodingFailure) -> Key? {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unterminated object") }
        if bytes[position] == UInt8(ascii: "}") {
            position += 1
            return nil
        }
        if !first {
            guard bytes[position] == UInt8(ascii: ",") else { throw syntaxError("expected ',' or '}' in object") }
            position += 1
            skipWhitespace()
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            throw syntaxError("expected a member name")
        }
        let (start, end, hasEscapes) = try scanString(decodingInto: nil)
        skipWhitespace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
            throw syntaxError("expected ':' after a member name")
        }
        position += 1
        return Key(start: start, end: end, hasEscapes: hasEscapes)
    }

    /// The raw bytes of a member name (between its quotes).
    package func content(of key: Key) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[key.start..<key.end])
    }

    /// Calls `body` with a member name's content, escapes resolved.
    package func withDecodedContent<R>(of key: Key, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        withContent(of: RawString(start: key.start, end: key.end, hasEscapes: key.hasEscapes), body)
    }

    /// Whether the next value is `null` (consumed if so).
    package mutating func consumeNull() throws(DecodingFailure) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end of input") }
        guard bytes[position] == UInt8(ascii: "n") else { return false }
        try expectLiteral("null")
        return true
    }

    /// Consumes `[`; returns false when the value there is something else (nothing consumed).
    package mutating func enterArray() throws(DecodingFailure) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end of input") }
        guard bytes[position] == UInt8(ascii: "[") else { return false }
        position += 1
        return true
    }

    /// Moves to the next array element, or returns false at the array's closing `]`.
    package mutating func nextElement(first: Bool) throws(DecodingFailure) -> Bool {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unterminated array") }
        if bytes[position] == UInt8(ascii: "]") {
            position += 1
            return false
        }
        if !first {
            guard bytes[position] == UInt8(ascii: ",") else { throw syntaxError("expected ',' or ']' in array") }
            position += 1
        }
        return true
    }

    // MARK: Values

    /// A string value, located in the input and already validated.
    package struct RawString {
        package let start: Int
        package let end: Int
        package let hasEscapes: Bool
    }

    /// Reads a string value without decoding it; nil when the value there is not a string (nothing consumed).
    package mutating func readRawString() throws(DecodingFailure) -> RawString? {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end of input") }
        guard bytes[position] == UInt8(ascii: "\"") else { return nil }
        let (start, end, hasEscapes) = try scanString(decodingInto: nil)
        return RawString(start: start, end: end, hasEscapes: hasEscapes)
    }

    /// Calls `body` with the decoded content of `raw`: in place when it has no escapes.
    package func withContent<R>(of raw: RawString, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        if !raw.hasEscapes { return body(UnsafeRawBufferPointer(rebasing: bytes[raw.start..<raw.end])) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.end - raw.start)
        var again = self
        again.position = raw.start - 1
        _ = try? again.scanString(decodingInto: &decoded)  // validated once already: cannot fail
        return decoded.withUnsafeBytes(body)
    }

    /// Moves past `count` bytes that the caller knows to be a valid value (text it has read before).
    package mutating func skip(_ count: Int) {
        precondition(count <= bytes.count - position, "skipping past the end of the input")
        position += count
    }

    /// Reads a number value; nil when the value there is not a number (nothing consumed).
    package mutating func readNumber() throws(DecodingFailure) -> Double? {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end of input") }
        let first = bytes[position]
        guard first == UInt8(ascii: "-") || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else {
            return nil
        }
        return try scanNumber()
    }

    /// Skips one value of any kind, checking that it is valid JSON.
    package mutating func skipValue(depth: Int = 0) throws(DecodingFailure) {
        skipWhitespace()
        guard position < bytes.count else { throw syntaxError("unexpected end of input") }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            _ = try scanString(decodingInto: nil)
        case UInt8(ascii: "{"):
            guard depth < Self.maximumDepth else { throw syntaxError("nested too deeply") }
            position += 1
            var first = true
            while try nextKey(first: first) != nil {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { throw syntaxError("nested too deeply") }
            position += 1
            var first = true
            while try nextElement(first: first) {
                first = false
                try skipValue(depth: depth + 1)
            }
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try scanNumber()
        default: throw syntaxError("unexpected character")
        }
    }

    /// The bytes from `start` to the current position, as text (already validated UTF-8).
    package func text(from start: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }

    /// The position of the next non-whitespace byte.
    package mutating func valueStart() -> Int {
        skipWhitespace()
        return position
    }

    /// The kind of the next value, by its first byte, for error messages.
    package mutating func describeNextValue() -> String {
        skipWhitespace()
        guard position < bytes.count else { return "nothing" }
        switch bytes[position] {
        case UInt8(ascii: "\""): return "a string"
        case UInt8(ascii: "{"): return "an object"
        case UInt8(ascii: "["): return "an array"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return "a boolean"
        case UInt8(ascii: "n"): return "null"
        default: return "a number"
        }
    }

    // MARK: Lexing

    @inline(__always)
    package mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(DecodingFailure) {
        let length = literal.utf8CodeUnitCount
        guard bytes.count - position >= length,
            memoryEquals(bytes.baseAddress! + position, literal.utf8Start, length)
        else { throw syntaxError("invalid literal") }
        position += length
    }

    /// Scans the string starting at the current `"`, validating escapes, control characters and UTF-8.
    ///
    /// Returns the content's range (between the quotes) and whether it holds escapes; with `output`, also appends the
    /// decoded content.
    private mutating func scanString(
        decodingInto output: UnsafeMutablePointer<[UInt8]>?
    ) throws(DecodingFailure) -> (Int, Int, Bool) {
        position += 1  // the opening quote
        let start = position
        var hasEscapes = false
        var runStart = position  // start of the bytes not yet copied to `output`
        while position < bytes.count {
            position = Self.endOfPlainRun(in: bytes, from: position)
            guard position < bytes.count else { break }
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                output?.pointee.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<position]))
                let end = position
                position += 1
                return (start, end, hasEscapes)
            }
            if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                output?.pointee.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<position]))
                try scanEscape(into: output)
                runStart = position
                continue
            }
            if byte < 0x20 { throw syntaxError("control character in a string") }
            if byte < 0x80 {
                position += 1
            } else {
                try scanMultibyteCharacter()
            }
        }
        throw syntaxError("unterminated string")
    }

    /// The first position at or after `start` that holds a quote, a backslash, a control character or a byte of a
    /// multibyte character (`bytes.count` if none): where a string's plain ASCII run ends.
    ///
    /// Eight bytes at a time while eight are left: member names, device ids and language tags are mostly such
    /// runs, and a byte at a time was the largest part of decoding a position.
    @inline(__always)
    private static func endOfPlainRun(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int {
        var position = start
        while bytes.count - position >= 8 {
            let word = bytes.word(at: position)
            let stops = specialBytes(in: word)
            if stops != 0 { return position + stops.trailingZeroBitCount / 8 }
            position += 8
        }
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { break }
            position += 1
        }
        return position
    }

    /// The high bit of each byte of `word` that is a quote, a backslash, below 0x20 or at least 0x80, exact for the
    /// lowest such byte (the subtractions' borrows may mark bytes above it, never below).
    @inline(__always)
    private static func specialBytes(in word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        let quotes = word ^ (ones &* 0x22)
        let backslashes = word ^ (ones &* 0x5C)
        let zeroIn: (UInt64) -> UInt64 = { ($0 &- ones) & ~$0 }
        let belowSpace = (word &- ones &* 0x20) & ~word
        return (zeroIn(quotes) | zeroIn(backslashes) | belowSpace | word) & highBits
    }

    private mutating func scanEscape(into output: UnsafeMutablePointer<[UInt8]>?) throws(DecodingFailure) {
        guard position + 1 < bytes.count else { throw syntaxError("unterminated string") }
        let escaped = bytes[position + 1]
        position += 2
        let simple: UInt8
        switch escaped {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            var scalar = try scanHex4()
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by an escaped low one.
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw syntaxError("unpaired surrogate in a string") }
                position += 2
                let low = try scanHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw syntaxError("unpaired surrogate in a string") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw syntaxError("unpaired surrogate in a string")
            }
            if let output { appendUTF8(scalar, to: &output.pointee) }
            return
        default:
            throw syntaxError("invalid escape in a string")
        }
        output?.pointee.append(simple)
    }

    private mutating func scanHex4() throws(DecodingFailure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw syntaxError("unterminated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw syntaxError("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Validates one UTF-8 encoded character of two to four bytes (Unicode 15, table 3-7).
    private mutating func scanMultibyteCharacter() throws(DecodingFailure) {
        let lead = bytes[position]
        let length: Int
        var lowest: UInt8 = 0x80  // allowed range of the second byte
        var highest: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0:
            length = 3
            lowest = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED:
            length = 3
            highest = 0x9F  // no surrogates
        case 0xF0:
            length = 4
            lowest = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4:
            length = 4
            highest = 0x8F  // nothing above U+10FFFF
        default: throw syntaxError("invalid UTF-8")
        }
        guard position + length <= bytes.count else { throw syntaxError("invalid UTF-8") }
        let second = bytes[position + 1]
        guard second >= lowest && second <= highest else { throw syntaxError("invalid UTF-8") }
        for offset in 2..<length where bytes[position + offset] & 0xC0 != 0x80 {
            throw syntaxError("invalid UTF-8")
        }
        position += length
    }

    /// Scans a number per RFC 8259's grammar and returns its value, correctly rounded (``DecimalNumber``).
    private mutating func scanNumber() throws(DecodingFailure) -> Double {
        do {
            let (value, end) = try DecimalNumber.scan(bytes, from: position, grammar: .json)
            position = end
            return value
        } catch .leadingZero {
            throw syntaxError("leading zero in a number")
        } catch {
            throw syntaxError("invalid number")
        }
    }

    private func syntaxError(_ what: String) -> DecodingFailure {
        DecodingFailure(.invalidJSON, "not valid JSON: \(what) at byte \(position)")
    }
}

@inline(__always)
private func memoryEquals(_ lhs: UnsafeRawPointer, _ rhs: UnsafeRawPointer, _ count: Int) -> Bool {
    for index in 0..<count
    where lhs.load(fromByteOffset: index, as: UInt8.self) != rhs.load(fromByteOffset: index, as: UInt8.self) {
        return false
    }
    return true
}

/// Appends the UTF-8 encoding of a Unicode scalar value (never a surrogate here).
private func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
    switch scalar {
    case 0..<0x80:
        output.append(UInt8(scalar))
    case 0x80..<0x800:
        output.append(UInt8(0xC0 | scalar >> 6))
        output.append(UInt8(0x80 | scalar & 0x3F))
    case 0x800..<0x10000:
        output.append(UInt8(0xE0 | scalar >> 12))
        output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        output.append(UInt8(0x80 | scalar & 0x3F))
    default:
        output.append(UInt8(0xF0 | scalar >> 18))
        output.append(UInt8(0x80 | scalar >> 12 & 0x3F))
        output.append(UInt8(0x80 | scalar >> 6 & 0x3F))
        output.append(UInt8(0x80 | scalar & 0x3F))
    }
}
