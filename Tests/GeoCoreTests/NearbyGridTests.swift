import GeoCore
import Testing

/// The grid's answers against a scan of every point, on random points and where grids go wrong: across the
/// antimeridian, near the poles, on a cell's edge, and after things move or go.
@Suite("Nearby grid", .timeLimit(.minutes(5)))
struct NearbyGridTests {
    /// A reproducible generator (SplitMix64), so that a failure names its seed.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    func coordinate(_ latitude: Double, _ longitude: Double) throws -> Coordinate {
        try #require(Coordinate(latitude: latitude, longitude: longitude))
    }

    /// What a scan of every point answers.
    func scan(_ points: [Int: Coordinate], near center: Coordinate, within radius: Double) -> [(Int, Double)] {
        points.compactMap { id, point in
            let distance = center.distance(to: point)
            return distance <= radius ? (id, distance) : nil
        }.sorted { $0.1 < $1.1 }
    }

    @Test(
        "nearest within a radius equals a scan of every point, in order, on 20,000 clustered random points",
        arguments: [1, 2, 3]
    )
    func againstScan(seed: UInt64) throws {
        var random = Seeded(state: seed)
        var grid = NearbyGrid()
        var points: [Int: Coordinate] = [:]
        // Clusters around a few cities and a sprinkling everywhere, the antimeridian and the far north included.
        let centres = [(48.85, 2.35), (40.7, -74.0), (-16.5, 179.9), (78.2, 15.6), (-0.2, -78.5)]
        for id in 0..<20_000 {
            let point: Coordinate
            if id % 10 == 0 {
                point = try coordinate(
                    Double.random(in: -89.9...89.9, using: &random),
                    Double.random(in: -180...180, using: &random)
                )
            } else {
                let (latitude, longitude) = centres[id % centres.count]
                var east = longitude + Double.random(in: -0.5...0.5, using: &random)
                if east > 180 { east -= 360 }
                point = try coordinate(latitude + Double.random(in: -0.3...0.3, using: &random), east)
            }
            grid.place(id, at: point)
            points[id] = point
        }
        for query in 0..<200 {
            let (latitude, longitude) = centres[query % centres.count]
            let center = try coordinate(latitude + Double.random(in: -0.2...0.2, using: &random), longitude)
            let radius = [500.0, 5_000, 30_000, 200_000][query % 4]
            let expected = scan(points, near: center, within: radius)
            let answer = grid.nearest(to: center, within: radius, limit: 50)
            #expect(answer.map(\.distance) == expected.prefix(50).map(\.1), "seed \(seed), query \(query)")
            #expect(Set(answer.map(\.id)).isSubset(of: Set(expected.map(\.0))))
        }
    }

    @Test("across the antimeridian and at the poles, nothing near is missed")
    func edgesOfTheMap() throws {
        var grid = NearbyGrid(cellDegrees: 0.05)
        let (fijiEast, fijiWest, poleA, poleB) = (0, 1, 2, 3)
        grid.place(fijiEast, at: try coordinate(-17.0, 179.999))
        grid.place(fijiWest, at: try coordinate(-17.0, -179.999))
        grid.place(poleA, at: try coordinate(89.999, 10))
        grid.place(poleB, at: try coordinate(89.999, -170))
        let across = grid.nearest(to: try coordinate(-17.0, 179.9995), within: 1_000, limit: 10)
        #expect(Set(across.map(\.id)) == [fijiEast, fijiWest])
        let pole = grid.nearest(to: try coordinate(90, 0), within: 1_000, limit: 10)
        #expect(Set(pole.map(\.id)) == [poleA, poleB], "a degree of longitude is metres long there")
        #expect(grid.inside(south: -18, west: 179.5, north: -16, east: -179.5).sorted() == [fijiEast, fijiWest])
        #expect(grid.inside(south: -18, west: -179.5, north: -16, east: 179.5).isEmpty, "the other way round the globe")
    }

    @Test("a thing placed again moves; one removed is gone; the others stay where they are")
    func movesAndRemovals() throws {
        var grid = NearbyGrid(cellDegrees: 0.01)
        let here = try coordinate(50.0, 4.0)
        for id in 0..<100 { grid.place(id, at: here) }
        grid.place(7, at: try coordinate(51.0, 5.0))
        grid.remove(3)
        grid.remove(3)
        grid.remove(99)
        grid.place(42, at: try coordinate(50.0001, 4.0001))
        #expect(grid.count == 98)
        let near = grid.nearest(to: here, within: 100, limit: 1_000).map(\.id)
        #expect(Set(near) == Set(0..<99).subtracting([3, 7]), "every one in its cell once, and no other")
        #expect(grid.nearest(to: here, within: 100, limit: 1).map(\.id) != [42], "the moved one is not the nearest")
        #expect(grid.nearest(to: try coordinate(51.0, 5.0), within: 10, limit: 5).map(\.id) == [7])
        #expect(grid.coordinate(of: 3) == nil)
        #expect(grid.inside(south: 50.9, west: 4.9, north: 51.1, east: 5.1) == [7])
    }
}
