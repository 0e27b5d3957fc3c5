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
