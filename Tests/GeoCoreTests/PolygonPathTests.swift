import Foundation
import TestSupport
import Testing

@testable import GeoCore

/// The crossing check between two fixes passes over the edges far from the path by comparing degrees: it must
/// answer exactly as measuring every edge does.
@Suite("Polygon paths: pruned edges, same answers", .timeLimit(.minutes(5)))
struct PolygonPathTests {
    /// A star-shaped ring of `count` vertices around `center`, radii between `radius` / 3 and `radius`.
    static func ring(around center: Coordinate, radius: Double, count: Int, random: inout SplitMix64) -> [[Double]] {
        var ring = (0..<count).map { index -> [Double] in
            let bearing = Double(index) / Double(count) * 360
            let point = destination(
                from: center,
                distance: Double.random(in: radius / 3...radius, using: &random),
                bearing: bearing
            )
            return [point.longitude, point.latitude]
        }
        ring.append(ring[0])
        return ring
    }

    @Test("random shapes and paths, near the antimeridian and the poles too: pruned equals unpruned")
    func prunedEqualsUnpruned() throws {
        var random = SplitMix64(seed: 34)
        var passes = 0
        var cases = 0
        for index in 0..<40_000 {
            let latitude: Double
            let longitude: Double
            switch index % 4 {
            case 0:
                (latitude, longitude) = (
                    Double.random(in: -60...60, using: &random), Double.random(in: -170...170, using: &random)
                )
            case 1: (latitude, longitude) = (Double.random(in: -60...60, using: &random), 179.99)
            case 2:
                (latitude, longitude) = (
                    Double.random(in: 75...84, using: &random), Double.random(in: -170...170, using: &random)
                )
            default:
                (latitude, longitude) = (
                    Double.random(in: 40...50, using: &random), Double.random(in: 0...10, using: &random)
                )
            }
            let center = try #require(Coordinate(latitude: latitude, longitude: longitude))
            let radius = Double.random(in: 100...5_000, using: &random)
            let vertices = Int.random(in: 3...200, using: &random)
            var outer = Self.ring(around: center, radius: radius, count: vertices, random: &random)
            var rings = [outer]
            if index % 3 == 0 {
                // A hole, wholly inside the outer ring's inner third.
                rings.append(Self.ring(around: center, radius: radius / 4, count: 12, random: &random).reversed())
            }
            // Shapes that would cross the antimeridian are split there by their senders: shift them back.
            if rings.joined().contains(where: { $0[0] > 180 || $0[0] < -180 }) || longitude > 179 {
                rings = rings.map { ring in ring.map { [min(180, max(-180, $0[0])), $0[1]] } }
                outer = rings[0]
            }
            guard let shape = try? PolygonShape(polygons: [rings], isMulti: false) else { continue }
            // Paths from anywhere within twice the radius; some start on a vertex.
            let start =
                index % 5 == 0
                ? try #require(Coordinate(latitude: outer[1][1], longitude: outer[1][0]))
                : destination(
                    from: center,
                    distance: Double.random(in: 0...2 * radius, using: &random),
                    bearing: Double.random(in: 0..<360, using: &random)
                )
            let end = destination(
                from: center,
                distance: Double.random(in: 0...2 * radius, using: &random),
                bearing: Double.random(in: 0..<360, using: &random)
            )
            // The tracker asks only of two fixes outside the shape (inside, the fix itself decides).
            if shape.contains(longitude: start.longitude, latitude: start.latitude)
                || shape.contains(longitude: end.longitude, latitude: end.latitude)
            {
                continue
            }
            let margin = [0, 1, 10, 50, radius / 5][index % 5]
            let pruned = shape.pathPassesInside(from: start, to: end, margin: margin)
            let unpruned = shape.pathPassesInside(from: start, to: end, margin: margin, prunesEdges: false)
            cases += 1
            #expect(pruned == unpruned, "case \(index): \(start) -> \(end), margin \(margin), \(vertices) vertices")
            if pruned { passes += 1 }
        }
        // Both answers occur often enough for the comparison to mean something.
        #expect(cases > 10_000, "\(cases) paths between fixes outside")
        #expect(passes > cases / 10 && passes < cases * 9 / 10, "\(passes) of \(cases) paths pass inside")
    }
}
