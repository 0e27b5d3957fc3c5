/// A first-level subdivision of a country (a state, province, region): ISO 3166-2's, or GeoNames' admin-1 division
/// where ISO 3166-2 codes none for the place.
public struct PlaceRegion: Hashable, Sendable {
    /// Where the answer came from.
    public enum Source: String, Hashable, Sendable {
        /// The region's boundary polygon contains the point: exact to that boundary.
        case polygon
        /// The country has no region polygons here: the region of the nearest populated place of the same country.
        case nearestPlace = "nearest-place"
        /// As `nearestPlace`, and the region is one ISO 3166-2 does not code: GeoNames' admin-1 division, with
        /// GeoNames' code (`FO.VG`, `XK.10097360`; a dot where ISO's codes have a hyphen).
        case geonamesAdmin1 = "geonames-admin1"
    }

    /// ISO 3166-2, such as `US-NY`, or GeoNames' admin-1 code, such as `FO.VG` (``Source/geonamesAdmin1``).
    public let code: String
    /// The English name where one is known ("Bavaria"), else the local one.
    public let name: String
    /// The name in the region's own language or as ISO 3166-2 romanizes it ("Bayern"); the same as `name` when
    /// no English name is known.
    public let localName: String
    public let source: Source

    public init(code: String, name: String, localName: String? = nil, source: Source) {
        self.code = code
        self.name = name
        self.localName = localName ?? name
        self.source = source
    }

    /// The ISO 3166-1 alpha-2 code of the country the region belongs to (the code's part before the hyphen or dot).
    public var countryCode: Substring { code.prefix { $0 != "-" && $0 != "." } }
}
