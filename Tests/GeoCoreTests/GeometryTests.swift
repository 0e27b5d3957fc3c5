import GeoCore
import Testing

@Suite("Coordinates and distances", .timeLimit(.minutes(5)))
struct GeometryTests {
    @Test(
        "coordinates outside the globe or not finite are refused",
        arguments: [
            (90.000001, 0.0), (-90.000001, 0.0), (0.0, 180.000001), (0.0, -180.000001),
            (Double.nan, 0.0), (0.0, Double.nan), (Double.infinity, 0.0), (0.0, -Double.infinity),
        ]
    )
    func invalidCoordinates(latitude: Double, longitude: Double) {
        #expect(Coordinate(latitude: latitude, longitude: longitude) == nil)
    }

    @Test("the edges of the globe are valid", arguments: [(90.0, 180.0), (-90.0, -180.0), (0.0, 0.0), (-0.0, -0.0)])
    func edgeCoordinates(latitude: Double, longitude: Double) {
        #expect(Coordinate(latitude: latitude, longitude: longitude) != nil)
    }

    /// One degree of arc on the mean-radius sphere, in metres.
    static let degree = Coordinate.earthRadius * Double.pi / 180

    @Test(
        "great-circle distances, including across the antimeridian and at the poles",
        arguments: [
            // (from, to, expected metres, tolerance)
            ((50.8466, 4.3528), (50.8466, 4.3528), 0.0, 1e-9),  // same point
            ((0.0, 179.9), (0.0, -179.9), 0.2 * degree, 0.01),  // across the antimeridian, not around the world
            ((10.0, -180.0), (10.0, 180.0), 0.0, 1e-6),  // the same meridian written two ways
            ((90.0, 0.0), (90.0, 123.0), 0.0, 1e-6),  // every longitude at a pole is one point
            ((-90.0, -45.0), (-90.0, 170.0), 0.0, 1e-6),
            ((89.9, 0.0), (89.9, 180.0), 0.2 * degree, 0.01),  // over the north pole
            ((-89.9, 90.0), (-89.9, -90.0), 0.2 * degree, 0.01),  // over the south pole
            ((0.0, 0.0), (0.0, 90.0), 90 * degree, 0.01),  // a quarter of the equator
            ((0.0, 0.0), (0.0, 180.0), 180 * degree, 0.01),  // antipodes
            ((45.0, 10.0), (-45.0, -170.0), 180 * degree, 0.01),  // antipodes off the equator
            ((48.8566, 2.3522), (51.5074, -0.1278), 343_560.0, 500.0),  // Paris to London
        ]
    )
    func distances(from: (Double, Double), to: (Double, Double), expected: Double, tolerance: Double) throws {
        let a = try #require(Coordinate(latitude: from.0, longitude: from.1))
        let b = try #require(Coordinate(latitude: to.0, longitude: to.1))
        #expect(abs(a.distance(to: b) - expected) <= tolerance, "\(a) to \(b): \(a.distance(to: b))")
        #expect(abs(b.distance(to: a) - expected) <= tolerance, "distance must be symmetric")
    }

    @Test("pins need an id and a radius from 1 m to 100 km")
    func pinValidation() throws {
        let center = try #require(Coordinate(latitude: 50.85, longitude: 4.35))
        #expect(Pin(id: "a", center: center, radius: 1) != nil)
        #expect(Pin(id: "a", center: center, radius: 100_000) != nil)
        #expect(Pin(id: "a", center: center, radius: 0.99) == nil)
        #expect(Pin(id: "a", center: center, radius: 100_000.01) == nil)
        #expect(Pin(id: "", center: center, radius: 100) == nil)
        #expect(Pin(id: String(repeating: "x", count: 257), center: center, radius: 100) == nil)
    }
}
