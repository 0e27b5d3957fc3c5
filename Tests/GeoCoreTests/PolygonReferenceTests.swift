import Foundation
import GeoCore
import TestSupport
import Testing

/// Polygon geometry against shapely (GEOS), the reference most GIS code trusts: random polygons with holes and
/// MultiPolygons around the world, random points and points placed just either side of edges and holes' edges.
@Suite("Polygon geometry against shapely", .timeLimit(.minutes(10)))
struct PolygonReferenceTests {
    struct Case {
        let shape: PolygonShape
        let polygons: [[[[Double]]]]
        let points: [[Double]]
    }

    @Test("inside/outside agree exactly and edge distances to a micrometre, near edges and holes included")
    func agreesWithShapely() async throws {
        var random = SplitMix64(seed: 16)
        let cases = (0..<150).map { _ in Self.randomCase(&random) }
        // shapely is given the shape as geoworker keeps it (its vertices to 1e-7 degree), not the coordinates it was
        // made from.
        let input = cases.map { ["polygons": $0.shape.coordinates, "points": $0.points] as [String: Any] }
        let answers = try await Self.reference(input)
        try #require(answers.count == cases.count)
        var compared = 0
        var nearEdges = 0
        for (testCase, expected) in zip(cases, answers) {
            for (point, answer) in zip(testCase.points, expected) {
                let coordinate = Coordinate(latitude: point[1], longitude: point[0])!
                let plane = LocalPlane(at: coordinate)
                let inside = testCase.shape.contains(longitude: point[0], latitude: point[1])
                let distance = testCase.shape.nearestEdge(to: plane).distance
                let referenceInside = answer[0] as! Bool
                let referenceDistance = (answer[1] as! NSNumber).doubleValue
                #expect(
                    abs(distance - referenceDistance) <= 1e-6 + referenceDistance * 1e-9,
                    "distance at \(point): \(distance) m, shapely \(referenceDistance) m"
                )
                // Exactly on an edge either answer is right (the rules never decide within an accuracy of it).
                if referenceDistance > 1e-7 {
                    #expect(inside == referenceInside, "inside at \(point) (\(referenceDistance) m from the edge)")
                }
                if referenceDistance < 1 { nearEdges += 1 }
                // The tracker's decision (without measuring every edge) follows the same answers.
                for margin in [0.5, 3, 20, 200] where abs(referenceDistance - margin) > 1e-6 && referenceDistance > 1e-7
                {
                    let expected: Membership? =
                        referenceDistance < margin ? nil : (referenceInside ? .inside : .outside)
                    let decided = PinShape.polygon(testCase.shape).decision(
                        at: coordinate,
                        margin: margin,
                        plane: plane
                    )
                    #expect(decided == expected, "decision at \(point) with margin \(margin) m")
                }
                compared += 1
            }
        }
        #expect(compared > 10_000 && nearEdges > 2_000, "\(compared) points, \(nearEdges) within 1 m of an edge")
    }

    /// shapely's answers: per case, per point, [inside, distance to the edge in metres].
    static func reference(_ input: [[String: Any]]) async throws -> [[[Any]]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let json = String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self)
        let result = try await ChildProcess.run(
            "/usr/bin/env",
            ["python3", root.appendingPathComponent("tools/geometry/polygon_reference.py").path],
            input: json
        )
        guard result.status == 0 else {
            throw ReferenceFailure("polygon_reference.py failed (make setup installs shapely): \(result.errors)")
        }
        return try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as! [[[Any]]]
    }

    struct ReferenceFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A star-shaped polygon (every vertex seen from its centre, so it never crosses itself) of 3 to 60 vertices,
    /// 50 m to 20 km across, anywhere from 70 S to 70 N; some with a star-shaped hole inside the star's inner
    /// radius, some MultiPolygons of two such stars far enough apart not to overlap.
    static func randomCase(_ random: inout SplitMix64) -> Case {
        let size = exp(random.uniform(log(50), log(20_000)))
        let latitude = random.uniform(-70, 70)
        let longitude = random.uniform(-175, 175)
        let count = random.next(below: 2) == 0 ? 2 : 1
        var polygons: [[[[Double]]]] = []
        for index in 0..<count {
            let center = Coordinate(latitude: latitude, longitude: longitude)!.offset(
                north: 0,
                east: Double(index) * size * 3
            )
            let vertices = 3 + random.next(below: 58)
            let inner = size * random.uniform(0.3, 0.5)
            let outer = star(&random, center: center, vertices: vertices, radii: inner...size, clockwise: false)
            var rings = [outer.ring]
            // A hole must stay inside: within the distance from the centre to the outer ring's nearest chord.
            if random.next(below: 2) == 0 && outer.widestGap < Double.pi * 0.9 {
                let room = inner * cos(outer.widestGap / 2)
                let hole = star(
                    &random,
                    center: center,
                    vertices: 3 + random.next(below: 12),
                    radii: room * 0.2...room * 0.8,
                    clockwise: true
                )
                rings.append(hole.ring)
            }
            polygons.append(rings)
        }
        let shape = try! PolygonShape(polygons: polygons, isMulti: count > 1)
        var points: [[Double]] = []
        let bounds = shape.bounds
        let padLongitude = (bounds.east - bounds.west) * 0.2
        let padLatitude = (bounds.north - bounds.south) * 0.2
        for _ in 0..<40 {
            points.append([
                random.uniform(bounds.west - padLongitude, bounds.east + padLongitude),
                random.uniform(bounds.south - padLatitude, bounds.north + padLatitude),
            ])
        }
        // Points just either side of an edge: from a point of a random edge, a small step across it.
        let rings = polygons.flatMap { $0 }
        for _ in 0..<40 {
            let ring = rings[random.next(below: rings.count)]
            let edge = random.next(below: ring.count - 1)
            let a = ring[edge]
            let b = ring[edge + 1]
            let t = random.uniform(0, 1)
            let metresEast = LocalPlane.metresPerDegree * cos(a[1] * Double.pi / 180)
            // The edge's normal in metres, then back to degrees.
            let dx = (b[0] - a[0]) * metresEast
            let dy = (b[1] - a[1]) * LocalPlane.metresPerDegree
            let length = (dx * dx + dy * dy).squareRoot()
            let step = exp(random.uniform(log(0.001), log(5))) * (random.next(below: 2) == 0 ? 1 : -1)
            points.append([
                a[0] + t * (b[0] - a[0]) - dy / length * step / metresEast,
                a[1] + t * (b[1] - a[1]) + dx / length * step / LocalPlane.metresPerDegree,
            ])
        }
        return Case(shape: shape, polygons: polygons, points: points)
    }

    static func star(
        _ random: inout SplitMix64,
        center: Coordinate,
        vertices: Int,
        radii: ClosedRange<Double>,
        clockwise: Bool
    ) -> (ring: [[Double]], widestGap: Double) {
        var angles = (0..<vertices).map { _ in random.uniform(0, 2 * Double.pi) }.sorted()
        var widestGap = angles[0] + 2 * Double.pi - angles[angles.count - 1]
        for index in 1..<angles.count { widestGap = max(widestGap, angles[index] - angles[index - 1]) }
        if clockwise { angles.reverse() }
        var ring = angles.map { angle -> [Double] in
            let radius = random.uniform(radii.lowerBound, radii.upperBound)
            let point = center.offset(north: radius * cos(angle), east: radius * sin(angle))
            return [point.longitude, point.latitude]
        }
        ring.append(ring[0])
        return (ring, widestGap)
    }
}
