extension Coordinate {
    /// A coordinate written `lat,lon` in degrees, with optional spaces or tabs around each number (a line of
    /// `geoworker geocode --input`); nil when the text is not that or a value is out of range.
    public init?(latLon text: ArraySlice<UInt8>) {
        guard let comma = text.firstIndex(of: UInt8(ascii: ",")),
            let latitude = Self.number(text[..<comma]),
            let longitude = Self.number(text[(comma + 1)...])
        else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }

    private static func number(_ bytes: ArraySlice<UInt8>) -> Double? {
        // Trimmed as bytes: a coordinate's text is short enough to be a small string, so a line of a
        // multi-million-line stream allocates nothing.
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }),
            let last = bytes.lastIndex(where: { !isBlank($0) })
        else { return nil }
        return Double(String(decoding: bytes[first...last], as: UTF8.self))
    }
}
