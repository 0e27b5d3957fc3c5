import JSONCodec

extension Coordinate {
    /// A coordinate written `lat,lon` or `lat lon` in degrees, with optional spaces or tabs around each number (a line
    /// of `geoworker geocode --input`, or a point copied from a map); nil when the text is not that or a value is out
    /// of range.
    public init?(latLon text: ArraySlice<UInt8>) {
        guard let coordinate = text.withUnsafeBytes({ Coordinate(latLon: $0) }) else { return nil }
        self = coordinate
    }

    /// A coordinate written `lat,lon` or `lat lon` in degrees, read in place (see ``init(latLon:)-(ArraySlice<UInt8>)``).
    ///
    /// Numbers are decimal (``DecimalNumber``'s lenient grammar: `+1.5`, `.5` and `1e-3` too).
    public init?(latLon text: UnsafeRawBufferPointer) {
        guard let (latitude, longitude) = Self.numbers(latLon: text) else { return nil }
        self.init(latitude: latitude, longitude: longitude)
    }

    /// The two numbers of `lat,lon` or `lat lon` (blanks around them allowed), whatever their range.
    private static func numbers(latLon text: UnsafeRawBufferPointer) -> (Double, Double)? {
        var position = 0
        guard let latitude = number(text, at: &position), position < text.count else { return nil }
        if text[position] == UInt8(ascii: ",") {
            position += 1
        } else if !isBlank(text[position - 1]) {
            return nil  // neither a comma nor a blank between them
        }
        guard let longitude = number(text, at: &position), position == text.count else { return nil }
        return (latitude, longitude)
    }

    /// Why `text` is not a coordinate as ``init(latLon:)-(UnsafeRawBufferPointer)`` reads one, in words for the
    /// person who typed it; nil when it is one.
    public static func latLonProblem(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes in
            let bytes = UnsafeRawBufferPointer(bytes)
            guard let (latitude, longitude) = numbers(latLon: bytes) else {
                return "expected 'lat,lon' or 'lat lon' in degrees"
            }
            guard (-90.0...90.0).contains(latitude) else { return "latitude \(latitude) is outside -90...90" }
            guard (-180.0...180.0).contains(longitude) else { return "longitude \(longitude) is outside -180...180" }
            return Coordinate(latLon: bytes) == nil ? "expected 'lat,lon' or 'lat lon' in degrees" : nil
        }
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
