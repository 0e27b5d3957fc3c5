/// Country outlines for drawing (the operations page's map): the index's own boundary rings, simplified.
///
/// The index keeps each ring's vertices consecutively and closed (the first vertex repeated at its end), so
/// the rings are read back from its vertex table without the source boundaries. Simplified with
/// Douglas-Peucker to `tolerance` degrees, they stay recognisable at a fraction of the size.
public enum CountryOutlines {
    /// The rings as JSON, `{"precision": 100, "rings": [[x0, y0, x1, y1, ...], ...]}`: each ring's vertices as
    /// longitude and latitude in hundredths of a degree, closed.
    ///
    /// The same index gives the same bytes.
    public static func json(of index: CountryIndex, tolerance: Double = 0.05) -> [UInt8] {
        let precision = 100.0
        var text = "{\"precision\":\(Int(precision)),\"rings\":["
        var firstRing = true
        for ring in rings(of: index) {
            let simplified = simplify(ring, tolerance: tolerance)
            var values: [Int] = []
            for point in simplified {
                let x = Int((point.x * precision).rounded())
                let y = Int((point.y * precision).rounded())
                if values.count >= 2, values[values.count - 2] == x, values[values.count - 1] == y { continue }
                values += [x, y]
            }
            guard values.count >= 8 else { continue }  // what rounds away to less than a triangle
            text += (firstRing ? "[" : ",[") + values.map(String.init).joined(separator: ",") + "]"
            firstRing = false
        }
        text += "]}"
        return Array(text.utf8)
    }

    /// Every ring of the index, in degrees.
    static func rings(of index: CountryIndex) -> [[(x: Double, y: Double)]] {
        let vertices = index.tables.vertices
        let scale = Double(FixedPoint.unitsPerDegree)
        var rings: [[(x: Double, y: Double)]] = []
        var start = 0
        while start < vertices.count {
            // A ring ends where its first vertex comes back (at least three corners later).
            var end = start + 3
            while end < vertices.count && vertices[end] != vertices[start] { end += 1 }
            guard end < vertices.count else { break }
            rings.append(vertices[start...end].map { (Double($0.x) / scale, Double($0.y) / scale) })
            start = end + 1
        }
        return rings
    }

    /// Douglas-Peucker: keeps the vertices that stray more than `tolerance` from the simplified line.
    static func simplify(_ ring: [(x: Double, y: Double)], tolerance: Double) -> [(x: Double, y: Double)] {
        guard ring.count > 4 else { return ring }
        var keep = [Bool](repeating: false, count: ring.count)
        keep[0] = true
        keep[ring.count - 1] = true
        // A closed ring's ends coincide: split it at its farthest vertex from the start first.
        let far = (1..<ring.count - 1).max { distanceSquared(ring[$0], ring[0]) < distanceSquared(ring[$1], ring[0]) }!
        keep[far] = true
        var spans = [(0, far), (far, ring.count - 1)]
        while let (first, last) = spans.popLast() {
            guard last > first + 1 else { continue }
            var farthest = first
            var greatest = 0.0
            for index in first + 1..<last {
                let distance = segmentDistance(ring[index], ring[first], ring[last])
                if distance > greatest {
                    greatest = distance
                    farthest = index
                }
            }
            guard greatest > tolerance else { continue }
            keep[farthest] = true
            spans += [(first, farthest), (farthest, last)]
        }
        return ring.indices.filter { keep[$0] }.map { ring[$0] }
    }

    private static func distanceSquared(_ a: (x: Double, y: Double), _ b: (x: Double, y: Double)) -> Double {
        (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y)
    }

    /// The distance from `point` to the segment from `a` to `b`, in degrees of the plane.
    private static func segmentDistance(
        _ point: (x: Double, y: Double),
        _ a: (x: Double, y: Double),
        _ b: (x: Double, y: Double)
    ) -> Double {
        let length = distanceSquared(a, b)
        guard length > 0 else { return distanceSquared(point, a).squareRoot() }
        let t = max(0, min(1, ((point.x - a.x) * (b.x - a.x) + (point.y - a.y) * (b.y - a.y)) / length))
        return distanceSquared(point, (a.x + t * (b.x - a.x), a.y + t * (b.y - a.y))).squareRoot()
    }
}
