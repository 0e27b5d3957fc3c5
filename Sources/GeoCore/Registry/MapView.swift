/// The part of the world a map shows: a longitude/latitude box, west to east (west > east when it spans the
/// antimeridian).
public struct MapView: Hashable, Sendable {
    public let west: Double
    public let south: Double
    public let east: Double
    public let north: Double

    /// The whole world.
    public static let world = MapView(west: -180, south: -90, east: 180, north: 90)

    public init(west: Double, south: Double, east: Double, north: Double) {
        self.west = west
        self.south = south
        self.east = east
        self.north = north
    }

    /// Reads `west,south,east,north` in degrees (a GeoJSON bbox); nil unless it is four numbers in range
    /// with south <= north.
    public init?(bbox text: String) {
        let numbers = text.split(separator: ",", omittingEmptySubsequences: false).map {
            Double($0.filter { $0 != " " })
        }
        guard numbers.count == 4, let west = numbers[0], let south = numbers[1], let east = numbers[2],
            let north = numbers[3], (-180...180).contains(west), (-180...180).contains(east),
            (-90...90).contains(south), (-90...90).contains(north), south <= north
        else { return nil }
        self.init(west: west, south: south, east: east, north: north)
    }

    public func contains(_ coordinate: Coordinate) -> Bool {
        guard coordinate.latitude >= south, coordinate.latitude <= north else { return false }
        if west <= east { return coordinate.longitude >= west && coordinate.longitude <= east }
        return coordinate.longitude >= west || coordinate.longitude <= east
    }
}
