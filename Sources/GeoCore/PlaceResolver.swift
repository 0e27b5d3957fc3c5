/// Where a fix is in human terms: the seam between the tracker and the places index (the `Places` module).
///
/// Like ``CountryResolver``, pure from the tracker's side: the same coordinate always gets the same answer.
///
/// A class: one index is shared by every tracker, and the tracker's copies of it are then a reference each (an
/// existential of any type was copied through its type's value witnesses at every fix).
public protocol PlaceResolver: AnyObject, Sendable {
    /// The region of a fix at `coordinate` whose accuracy is `radius` metres, in the country `countryCode` (the
    /// country at the point itself, nil at sea beyond the coastal tolerance): ``PlaceDecision/undecided`` when the
    /// accuracy disc reaches across a region boundary.
    func region(at coordinate: Coordinate, within radius: Double, countryCode: String?) -> PlaceDecision<PlaceRegion>
    /// The time zone of a fix: ``PlaceDecision/undecided`` when its accuracy disc reaches across a zone boundary.
    func timeZone(at coordinate: Coordinate, within radius: Double) -> PlaceDecision<String>
    /// The populated place nearest `coordinate`, of the country `countryCode` when there is one.
    func locality(near coordinate: Coordinate, countryCode: String?) -> Locality?
    /// ``region(at:within:countryCode:)``, and how far from `coordinate` (up to `reach` metres) the answer stays the
    /// same for any disc inside that circle (its clearance, as ``CountryResolver`` gives one for countries); nil
    /// when the resolver cannot tell.
    func region(
        at coordinate: Coordinate,
        within radius: Double,
        countryCode: String?,
        clearanceUpTo reach: Double
    ) -> (region: PlaceDecision<PlaceRegion>, clearance: Double?)
    /// ``timeZone(at:within:)`` with its clearance, as for regions.
    func timeZone(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (timeZone: PlaceDecision<String>, clearance: Double?)
    /// The offset from UTC, in seconds, of the IANA time zone `identifier` at `time` (milliseconds since the epoch; daylight saving time
    /// included), or nil for a zone the resolver does not know.
    func utcOffset(ofTimeZone identifier: String, at time: Int64) -> Int?
}

extension PlaceResolver {
    public func region(
        at coordinate: Coordinate,
        within radius: Double,
        countryCode: String?,
        clearanceUpTo reach: Double
    ) -> (region: PlaceDecision<PlaceRegion>, clearance: Double?) {
        (region(at: coordinate, within: radius, countryCode: countryCode), nil)
    }

    public func timeZone(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (timeZone: PlaceDecision<String>, clearance: Double?) {
        (timeZone(at: coordinate, within: radius), nil)
    }

    /// The region, nearest locality and time zone of a fix at once (see each).
    public func places(at coordinate: Coordinate, within radius: Double, countryCode: String?) -> PlaceAnswer {
        PlaceAnswer(
            region: region(at: coordinate, within: radius, countryCode: countryCode),
            locality: locality(near: coordinate, countryCode: countryCode),
            timeZone: timeZone(at: coordinate, within: radius)
        )
    }
}

/// An answer that a fix may leave open: a boundary lies within its accuracy.
public enum PlaceDecision<Value: Hashable & Sendable>: Hashable, Sendable {
    /// Every point of the fix's accuracy disc has this answer (nil: none, such as no region at sea).
    case decided(Value?)
    /// The disc reaches across a boundary: the fix does not decide.
    case undecided

    /// The decided value, nil when undecided or decided as none.
    public var value: Value? {
        if case .decided(let value) = self { return value }
        return nil
    }
}

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

/// The populated place (GeoNames) nearest a point.
public struct Locality: Hashable, Sendable {
    public let name: String
    /// GeoNames' id of the place (its page: `https://www.geonames.org/<id>`).
    public let geonameId: Int
    public let population: Int
    /// The place's own coordinate.
    public let coordinate: Coordinate
    /// Great-circle distance in metres from the point looked up.
    public let distance: Double

    public init(name: String, geonameId: Int, population: Int, coordinate: Coordinate, distance: Double) {
        self.name = name
        self.geonameId = geonameId
        self.population = population
        self.coordinate = coordinate
        self.distance = distance
    }
}

/// What ``PlaceResolver/places(at:within:countryCode:)`` answers for one fix.
public struct PlaceAnswer: Hashable, Sendable {
    public var region: PlaceDecision<PlaceRegion>
    /// nil only when the index holds no place the search may answer with.
    public var locality: Locality?
    /// IANA time-zone name; at sea, the nautical zone (`Etc/GMT+5`) the polygons draw there.
    public var timeZone: PlaceDecision<String>

    public init(region: PlaceDecision<PlaceRegion>, locality: Locality?, timeZone: PlaceDecision<String>) {
        self.region = region
        self.locality = locality
        self.timeZone = timeZone
    }
}
