/// Text read a word at a time: eight bytes as one word, the first byte lowest, and masks of a word's lowest bytes.
/// Shared by the scanner's plain runs, the numbers' digits and the member names.
extension UnsafeRawBufferPointer {
    /// The eight bytes from `offset` (which must leave eight to read) as a word, the first byte lowest.
    @inlinable @inline(__always)
    package func word(at offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UInt64 {
    /// A mask of the lowest `count` bytes of a word: none for 0 or less, all for 8 or more.
    @inlinable @inline(__always)
    package static func lowBytes(_ count: Int) -> UInt64 {
        count <= 0 ? 0 : (count >= 8 ? .max : (1 << (UInt64(count) * 8)) - 1)
    }
}
