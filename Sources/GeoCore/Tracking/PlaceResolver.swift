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
