/// An ISO 3166-2 first-level subdivision (a state, province, region).
public struct PlaceRegion: Hashable, Sendable {
    /// Where the answer came from.
    public enum Source: String, Hashable, Sendable {
        /// The region's boundary polygon contains the point: exact to that boundary.
        case polygon
        /// The country has no region polygons here: the region of the nearest populated place of the same country.
        case nearestPlace = "nearest-place"
    }

    /// ISO 3166-2, such as `US-NY`.
    public let code: String
    public let name: String
    public let source: Source

    public init(code: String, name: String, source: Source) {
        self.code = code
        self.name = name
        self.source = source
    }

    /// The ISO 3166-1 alpha-2 code of the country the region belongs to (the code's part before the hyphen).
    public var countryCode: Substring { code.prefix { $0 != "-" } }
}
