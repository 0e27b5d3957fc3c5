import JSONCodec

extension Coordinate {
    /// A coordinate written `lat,lon` in degrees, with optional spaces or tabs around each number (a line of
    /// `geoworker geocode --input`); nil when the text is not that or a value is out of range.
    public init?(latLon text: ArraySlice<UInt8>) {
        guard let coordinate = text.withUnsafeBytes({ Coordinate(latLon: $0) }) else { return nil }
        self = coordinate
    }

    /// A coordinate written `lat,lon` in degrees, read in place (see ``init(latLon:)-(ArraySlice<UInt8>)``).
    ///
    /// Numbers are decimal (``DecimalNumber``'s lenient grammar: `+1.5`, `.5` and `1e-3` too).
    public init?(latLon text: UnsafeRawBufferPointer) {
        var position = 0
        guard let latitude = Self.number(text, at: &position), position < text.count,
            text[position] == UInt8(ascii: ",")
        else { return nil }
        position += 1
        guard let longitude = Self.number(text, at: &position), position == text.count else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }

    /// The number at `position`, blanks around it skipped; `position` ends past the trailing blanks.
    @inline(__always)
    private static func number(_ text: UnsafeRawBufferPointer, at position: inout Int) -> Double? {
        while position < text.count && isBlank(text[position]) { position += 1 }
        guard let (value, end) = try? DecimalNumber.scan(text, from: position, grammar: .lenient) else { return nil }
        position = end
        while position < text.count && isBlank(text[position]) { position += 1 }
        return value
    }

    @inline(__always)
    private static func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
}
