/// Appends JSON tokens to a byte buffer, placing the commas.
///
/// Each token is stored byte by byte into room kept at the buffer's end: an event has some sixty tokens, and
/// appending each to the array (its uniqueness and capacity checked, a generic copy) was half of its encoding.
package struct JSONWriter {
    /// The buffer: the JSON written so far, then room for the next tokens.
    ///
    /// What is written is `storage[..<count]`; the bytes after it are meaningless. ``takeOutput()`` cuts them off.
    private var storage: [UInt8]
    /// The number of bytes written (those already in the buffer the writer was given included).
    package private(set) var count: Int
    /// Whether the next value in the current container needs a comma before it.
    private var needsComma = false

    /// A writer that appends to `output`.
    package init(output: [UInt8] = []) {
        storage = output
        count = output.count
    }

    /// The buffer given at the start with the JSON written after it; the writer is left empty.
    package mutating func takeOutput() -> [UInt8] {
        var output: [UInt8] = []
        swap(&output, &storage)
        output.removeSubrange(count...)
        count = 0
        needsComma = false
        return output
    }

    /// Forgets what was written, keeping the buffer and its room: a writer reused line after line grows its buffer
    /// once, not at every line.
    package mutating func removeAll() {
        count = 0
        needsComma = false
    }

    /// Calls `body` with the bytes written so far.
    package func withWrittenBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
    }

    /// Calls `write` with the address where the next byte goes (after a comma when `separated` and the value
    /// needs one) and room for `maximum` bytes there; `write` returns how many it wrote.
    @inline(__always)
    private mutating func store(
        atMost maximum: Int,
        separated: Bool,
        _ write: (UnsafeMutablePointer<UInt8>) -> Int
    ) {
        if storage.count - count <= maximum { makeRoom(for: maximum + 1) }
        let start = count
        let comma = separated && needsComma
        let written = storage.withUnsafeMutableBufferPointer { buffer in
            let text = buffer.baseAddress! + start
            guard comma else { return write(text) }
            text[0] = UInt8(ascii: ",")
            return 1 + write(text + 1)
        }
        count += written
    }

    /// Grows the room after `count` to at least `needed` bytes, by a kilobyte at least (from zeros copied in, so
    /// that a buffer emptied with its capacity kept takes them without reallocating).
    private mutating func makeRoom(for needed: Int) {
        var missing = count + max(needed, Self.zeros.count) - storage.count
        while missing > 0 {
            let part = min(missing, Self.zeros.count)
            storage.append(contentsOf: Self.zeros[..<part])
            missing -= part
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: 1024)

    /// Stores one byte, after a comma when `separated` and one is needed.
    @inline(__always)
    private mutating func byte(_ byte: UInt8, separated: Bool) {
        store(atMost: 1, separated: separated) { text in
            text[0] = byte
            return 1
        }
    }

    /// Stores `bytes` as they are, after a comma when `separated` and one is needed.
    @inline(__always)
    private mutating func bytes(_ bytes: UnsafeBufferPointer<UInt8>, separated: Bool) {
        store(atMost: bytes.count, separated: separated) { text in
            if let base = bytes.baseAddress { text.update(from: base, count: bytes.count) }
            return bytes.count
        }
    }

    /// Appends text that ends where a value or a first member comes next (after a `:` or a `{`).
    package mutating func fixed(_ text: [UInt8]) {
        text.withUnsafeBufferPointer { bytes($0, separated: false) }
        needsComma = false
    }

    package mutating func beginObject() {
        byte(UInt8(ascii: "{"), separated: true)
        needsComma = false
    }

    package mutating func endObject() {
        byte(UInt8(ascii: "}"), separated: false)
        needsComma = true
    }

    package mutating func beginArray() {
        byte(UInt8(ascii: "["), separated: true)
        needsComma = false
    }

    package mutating func endArray() {
        byte(UInt8(ascii: "]"), separated: false)
        needsComma = true
    }

    package mutating func key(_ name: StaticString) {
        let length = name.utf8CodeUnitCount
        store(atMost: length + 3, separated: true) { text in
            text[0] = UInt8(ascii: "\"")
            (text + 1).update(from: name.utf8Start, count: length)
            text[length + 1] = UInt8(ascii: "\"")
            text[length + 2] = UInt8(ascii: ":")
            return length + 3
        }
        needsComma = false
    }

    package mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            // Ids, names and codes almost never need escaping: copied whole when they do not; else each byte
            // takes at most six (`\u00XX`).
            let plain = !utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
            store(atMost: (plain ? utf8.count : 6 * utf8.count) + 2, separated: true) { text in
                text[0] = UInt8(ascii: "\"")
                var end = 1
                if plain {
                    if let base = utf8.baseAddress { (text + 1).update(from: base, count: utf8.count) }
                    end += utf8.count
                } else {
                    for byte in utf8 { end += Self.escape(byte, to: text + end) }
                }
                text[end] = UInt8(ascii: "\"")
                return end + 1
            }
        }
        needsComma = true
    }

    /// Stores `byte` as a JSON string holds it at `text`; returns the bytes stored (1, 2 or 6).
    private static func escape(_ byte: UInt8, to text: UnsafeMutablePointer<UInt8>) -> Int {
        let short: UInt8
        switch byte {
        case UInt8(ascii: "\""): short = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): short = UInt8(ascii: "\\")
        case 0x0A: short = UInt8(ascii: "n")
        case 0x0D: short = UInt8(ascii: "r")
        case 0x09: short = UInt8(ascii: "t")
        case 0..<0x20:
            text[0] = 0x5C
            text[1] = UInt8(ascii: "u")
            text[2] = UInt8(ascii: "0")
            text[3] = UInt8(ascii: "0")
            text[4] = hexDigits[Int(byte >> 4)]
            text[5] = hexDigits[Int(byte & 0xF)]
            return 6
        default:
            text[0] = byte
            return 1
        }
        text[0] = 0x5C
        text[1] = short
        return 2
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A finite number, in the shortest form that reads back to the same value.
    package mutating func number(_ value: Double) {
        precondition(value.isFinite, "JSON has no non-finite numbers")
        // (Compared through Int64 rather than `rounded()`, which is a call into the C library.)
        if abs(value) < 1e15 && Double(Int64(value)) == value {
            decimal(Int64(value).magnitude, decimals: 0, negative: value < 0)
        } else if let (digits, decimals) = Self.fewDecimals(abs(value)) {
            decimal(digits, decimals: decimals, negative: value < 0)
        } else {
            // The standard library's shortest digits (`description`'s text), written straight into the room.
            store(atMost: ShortestDigits.maximumLength, separated: true) { text in
                var digits = ShortestDigits(into: text)
                value.write(to: &digits)
                return digits.count
            }
        }
        needsComma = true
    }

    /// The digits and decimals of a number of at most 9 decimals between 0.0001 and a million (coordinates,
    /// distances, speeds) as `description` writes it, its shortest form that reads back to the same value, without
    /// the general shortest-digits search (a sixth of an event's encoding).
    ///
    /// Returns nil for others.
    private static func fewDecimals(_ magnitude: Double) -> (digits: UInt64, decimals: Int)? {
        // `description` writes these without an exponent, as this does.
        guard magnitude >= 1e-4 && magnitude < 1e6 else { return nil }
        // When some decimal of at most 9 decimals reads back as `magnitude`, the shortest such decimal's digits
        // times 10^(9 - its decimals) is within 0.06 of the exact `magnitude * 1e9` (half an ulp of a number
        // under a million is under 6e-11), and the product below (and the half added to round it) are off by
        // less than 0.07 each: so it rounds to those digits followed by zeros. Other numbers give up here.
        let scaled = magnitude * 1e9
        var digits = Int64(scaled + 0.5)
        guard abs(scaled - Double(digits)) < 0.25 else { return nil }
        var decimals = 9
        while decimals > 0 && digits % 10 == 0 {
            digits /= 10
            decimals -= 1
        }
        // Read back exactly as a parser would (one correctly rounded division of exact operands).
        guard decimals > 0, Double(digits) / powersOfTen[decimals] == magnitude else { return nil }
        return (digits.magnitude, decimals)
    }

    private static let powersOfTen: [Double] = (0...9).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }

    /// Writes `digits` with its last `decimals` digits after the point (none and no point for an integer; the
    /// last decimal not 0): the writer's one way of writing digits.
    private mutating func decimal(_ digits: UInt64, decimals: Int, negative: Bool) {
        // At most 20 digits, a point and a sign.
        store(atMost: 22, separated: true) { text in
            let start = negative ? 1 : 0
            if negative { text[0] = UInt8(ascii: "-") }
            var digitCount = 1
            var rest = digits / 10
            while rest > 0 {
                digitCount += 1
                rest /= 10
            }
            digitCount = max(digitCount, decimals + 1)
            let end = start + digitCount + (decimals > 0 ? 1 : 0)
            // Digits from the last; the point once `decimals` are written.
            var index = end
            rest = digits
            for written in 0..<digitCount {
                if written == decimals && decimals > 0 {
                    index -= 1
                    text[index] = UInt8(ascii: ".")
                }
                index -= 1
                text[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            return end
        }
    }

    package mutating func bool(_ value: Bool) {
        literal(value ? "true" : "false")
    }

    package mutating func null() {
        literal("null")
    }

    private mutating func literal(_ text: StaticString) {
        bytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount), separated: true)
        needsComma = true
    }

    package mutating func timestamp(_ milliseconds: Int64) {
        store(atMost: RFC3339.length + 2, separated: true) { text in
            text[0] = UInt8(ascii: "\"")
            RFC3339.write(milliseconds, to: text + 1)
            text[RFC3339.length + 1] = UInt8(ascii: "\"")
            return RFC3339.length + 2
        }
        needsComma = true
    }

    /// Already valid JSON text (a pin's metadata), copied as it is.
    package mutating func raw(_ json: String) {
        var json = json
        json.withUTF8 { bytes($0, separated: true) }
        needsComma = true
    }

    /// Already valid JSON bytes, copied as they are.
    package mutating func raw(_ json: [UInt8]) {
        json.withUnsafeBufferPointer { bytes($0, separated: true) }
        needsComma = true
    }
}
