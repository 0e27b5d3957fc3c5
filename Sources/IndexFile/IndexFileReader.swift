/// Reads the fields of an index file: the format the country and places indexes share (a four-byte magic, a u32
/// version, then little-endian integers, length-prefixed strings and sections).
///
/// Reads from bytes it does not own (a mapped file's, or an array's): the caller keeps them alive meanwhile. Every
/// failure is an ``IndexFileError`` naming the file and the byte where reading stopped; a section's reader counts
/// from the start of the whole file, so an error deep in a nested index still gives the file's own offset.
package struct IndexFileReader {
    package let file: String
    private let bytes: UnsafeRawBufferPointer
    /// Where `bytes` start in the file (non-zero for a section's reader).
    private let base: Int
    /// The next byte to read, from the start of `bytes`.
    private var position = 0

    package init(_ bytes: UnsafeRawBufferPointer, file: String) {
        self.init(bytes, file: file, base: 0)
    }

    private init(_ bytes: UnsafeRawBufferPointer, file: String, base: Int) {
        self.bytes = bytes
        self.file = file
        self.base = base
    }

    /// The file offset of the next byte to read.
    package var offset: Int { base + position }

    /// The failure `problem` at `offset` (by default the next byte to read).
    package func failure(_ problem: String, at offset: Int? = nil) -> IndexFileError {
        IndexFileError(file: file, offset: offset ?? self.offset, problem: problem)
    }

    /// Checks the magic and version the file starts with; `kind` names the index in the errors.
    package mutating func header(magic: String, version: UInt32, kind: String) throws(IndexFileError) {
        guard Array(try take(magic.utf8.count)).elementsEqual(magic.utf8) else {
            throw failure("not a geoworker \(kind) (it does not start with \"\(magic)\")", at: base)
        }
        let found = try u32()
        guard found == version else {
            throw failure("\(kind) format version \(found), this geoworker reads version \(version): rebuild it")
        }
    }

    /// The next `count` bytes.
    package mutating func take(_ count: Int) throws(IndexFileError) -> UnsafeRawBufferPointer {
        guard count >= 0, bytes.count - position >= count else {
            throw failure("truncated: \(count) more bytes expected, \(bytes.count - position) left")
        }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position..<position + count])
    }

    /// A section: a u32 length, then that many bytes, read by a reader of their own.
    package mutating func section() throws(IndexFileError) -> IndexFileReader {
        let length = Int(try u32())
        let start = offset
        return IndexFileReader(try take(length), file: file, base: start)
    }

    package mutating func u8() throws(IndexFileError) -> UInt8 { try take(1)[0] }
    package mutating func u16() throws(IndexFileError) -> UInt16 { UInt16(try integer(of: 2)) }
    package mutating func u32() throws(IndexFileError) -> UInt32 { UInt32(try integer(of: 4)) }

    private mutating func integer(of size: Int) throws(IndexFileError) -> UInt64 {
        let field = try take(size)
        var value: UInt64 = 0
        for index in 0..<size { value |= UInt64(field[index]) << (8 * index) }
        return value
    }

    /// A UTF-8 string of `length` bytes.
    package mutating func string(length: Int) throws(IndexFileError) -> String {
        String(decoding: try take(length), as: UTF8.self)
    }

    /// `count` little-endian integers, in one copy of their bytes on a little-endian host: the tables are megabytes
    /// and loading them is most of a start-up, in a debug build too (where a loop per value is slow).
    package mutating func array<Integer: FixedWidthInteger>(_ count: Int) throws(IndexFileError) -> [Integer] {
        let (size, overflow) = count.multipliedReportingOverflow(by: MemoryLayout<Integer>.size)
        guard !overflow else { throw failure("a table of \(count) entries is larger than any file") }
        let raw = try take(size)
        // Copied in one go into uninitialized storage: outside this module the function runs unspecialized, where
        // `Array(repeating:count:)` first wrote every element through the type's value witness (most of the places
        // index's load time).
        let values = [Integer](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw)
            initialized = count
        }
        #if _endian(big)
        return values.map { Integer(littleEndian: $0) }
        #else
        return values
        #endif
    }

    /// Fails unless every byte has been read.
    package func expectEnd() throws(IndexFileError) {
        guard position == bytes.count else { throw failure("\(bytes.count - position) bytes follow the end") }
    }
}
