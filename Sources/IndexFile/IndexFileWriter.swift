/// Writes the fields ``IndexFileReader`` reads.
package struct IndexFileWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func header(magic: String, version: UInt32) {
        bytes += magic.utf8
        u32(version)
    }

    package mutating func u8(_ value: UInt8) { bytes.append(value) }
    package mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    package mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }

    package mutating func array<Integer: FixedWidthInteger>(_ values: [Integer]) {
        for value in values { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    }

    /// Bytes as they are, with no length before them.
    package mutating func raw<Bytes: Sequence<UInt8>>(_ raw: Bytes) { bytes += raw }

    /// A string with its length first, as a `Length` (u8, u16 or u32).
    package mutating func string<Length: FixedWidthInteger>(
        _ text: String,
        lengthAs: Length.Type
    ) throws(FieldTooLong) {
        guard let length = Length(exactly: text.utf8.count) else {
            throw FieldTooLong(description: "\"\(text.prefix(80))\" is longer than a \(Length.self) length holds")
        }
        array([length])
        bytes += text.utf8
    }

    /// A section: its length (u32), then its bytes.
    package mutating func section(_ section: [UInt8]) {
        u32(UInt32(section.count))
        bytes += section
    }
}

/// A string too long for the length field the format gives it.
package struct FieldTooLong: Error, CustomStringConvertible {
    package let description: String
}
