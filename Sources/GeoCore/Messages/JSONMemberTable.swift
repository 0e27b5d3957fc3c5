import JSONCodec

/// The member names a decoder knows, as an enum whose case names are the JSON names: a key is matched by
/// loading its bytes as two words and comparing those with each name's, a few integer comparisons per key
/// where a byte-by-byte comparison of every candidate (and the arrays holding them) cost more than the rest
/// of reading the key.
struct JSONMemberTable<Member: CaseIterable & Sendable>: Sendable {
    /// The longest member name a table takes, in UTF-8 bytes.
    static var maximumNameLength: Int { 16 }

    /// A name's bytes as two little-endian words, zero past its end, with its length: names that differ only
    /// by trailing zero bytes (an escaped `\u0000`) differ by length.
    private struct Entry: Sendable {
        let words: (UInt64, UInt64)
        let length: Int
        let member: Member
    }

    private let entries: [Entry]

    init() {
        entries = Member.allCases.map { member in
            let name = Array(String(describing: member).utf8)
            precondition(name.count <= Self.maximumNameLength, "member name \(member) is too long for the table")
            return name.withUnsafeBytes { Entry(words: Self.words(of: $0), length: name.count, member: member) }
        }
    }

    /// The member `key` names, or nil for a name the decoder ignores.
    func member(_ key: JSONScanner.Key, in scanner: JSONScanner) -> Member? {
        guard !key.hasEscapes else { return scanner.withDecodedContent(of: key) { member(named: $0) } }
        let length = key.end - key.start
        // A name with 16 bytes of the message from its start (its quote, colon and value follow it, so nearly
        // every one) is loaded as two words, the bytes past its end masked off, rather than byte by byte.
        guard length <= Self.maximumNameLength, scanner.bytes.count - key.start >= 16 else {
            return member(named: scanner.content(of: key))
        }
        let first = scanner.bytes.word(at: key.start) & .lowBytes(length)
        let second = scanner.bytes.word(at: key.start + 8) & .lowBytes(length - 8)
        return member(words: (first, second), length: length)
    }
    func member(named bytes: UnsafeRawBufferPointer) -> Member? {
        guard bytes.count <= Self.maximumNameLength else { return nil }
        return member(words: Self.words(of: bytes), length: bytes.count)
    }
    func member(words: (UInt64, UInt64), length: Int) -> Member? {
        for entry in entries where entry.words == words && entry.length == length {
            return entry.member
        }
        return nil
    }

    /// At most 16 bytes as two words, the first byte lowest (as a little-endian load gives them), zero past their end.
    static func words(of bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        var words: (UInt64, UInt64) = (0, 0)
        for (index, byte) in bytes.enumerated() {
            if index < 8 {
                words.0 |= UInt64(byte) << (UInt64(index) * 8)
            } else {
                words.1 |= UInt64(byte) << (UInt64(index - 8) * 8)
            }
        }
        return words
    }
}

extension JSONScanner {
    /// Reads the members of the object just entered up to its closing brace: `read` reads the value of each member
    /// `table` knows, and the others are skipped as values nested `depth` deep.
    ///
    /// Inlined so that `read`, a closure over the decoder's fields, becomes straight code in each decoder.
    @inline(__always)
    mutating func readMembers<Member>(
        of table: JSONMemberTable<Member>,
        depth: Int,
        _ read: (Member, inout JSONScanner) throws(DecodingFailure) -> Void
    ) throws(DecodingFailure) {
        var first = true
        while let key = try nextKey(first: first) {
            first = false
            if let member = table.member(key, in: self) {
                try read(member, &self)
            } else {
                try skipValue(depth: depth)
            }
        }
    }
}
