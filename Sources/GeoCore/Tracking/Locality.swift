/// The town or city (GeoNames' populated place) a person would name for a point, and the quarter of it the point is
/// nearest, when one is nearer than the town's own centre.
public struct Locality: Hashable, Sendable {
    public let name: String
    /// GeoNames' id of the place (its page: `https://www.geonames.org/<id>`).
    public let geonameId: Int
    public let population: Int
    /// The place's own coordinate.
    public let coordinate: Coordinate
    /// Great-circle distance in metres from the point looked up.
    public let distance: Double
    /// The quarter or section of the town nearest the point (Kreuzberg in Berlin), when one is nearer than the
    /// town's centre.
    public let district: District?

    /// A quarter or section of a town (GeoNames' populated place), never a locality of its own.
    public struct District: Hashable, Sendable {
        public let name: String
        public let geonameId: Int
        /// Great-circle distance in metres from the point looked up.
        public let distance: Double

        public init(name: String, geonameId: Int, distance: Double) {
            self.name = name
            self.geonameId = geonameId
            self.distance = distance
        }
    }

    public init(
        name: String,
        geonameId: Int,
        population: Int,
        coordinate: Coordinate,
        distance: Double,
        district: District? = nil
    ) {
        self.name = name
        self.geonameId = geonameId
        self.population = population
        self.coordinate = coordinate
        self.distance = distance
        self.district = district
    }
}
