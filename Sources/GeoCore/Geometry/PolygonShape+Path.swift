// Whether a path between two fixes passes inside a polygon (the crossings between sparse fixes), exactly, by the
// capsules of its edges. The point geometry is in PolygonShape+Geometry.swift.

extension PolygonShape {
    /// Whether the path from `start` to `end`, both outside the shape, has a point inside it by more than
    /// `margin` metres.
    ///
    /// Usually answered quickly: a path that crosses no edge never enters; one whose inside stretch (between
    /// two edge crossings) is deeper than `margin` at its middle passes through. Otherwise exactly rather than
    /// by sampling: along the path, the points within `margin` of an edge form one interval per edge (the
    /// path's chord through the edge's capsule, a convex set). What the intervals leave uncovered are stretches
    /// no edge comes near, each wholly inside or wholly outside, so testing one point of each stretch decides.
    ///
    /// `prunesEdges` false measures every edge (the tests compare both ways).
    func pathPassesInside(from start: Coordinate, to end: Coordinate, margin: Double, prunesEdges: Bool = true) -> Bool
    {
        let plane = LocalPlane(at: start)
        // The path is t * (dx, dy) for t in 0...1.
        let dx = plane.x(longitude: end.longitude)
        let dy = plane.y(latitude: end.latitude)
        let lengthSquared = dx * dx + dy * dy
        guard lengthSquared > 0 else { return false }
        // A path through the inner box, deeper into it than the margin, passes inside without a look at any edge:
        // every edge lies outside that box, so further from the path's point there than the box's sides are.
        if prunesEdges, let inner = innerBox?.shrunk(by: margin, in: plane),
            abs(end.longitude - start.longitude) <= 180, inner.mayMeetSegment(from: start, to: end)
        {
            return true
        }
        // Only edges whose box meets the path's can cross it: most of a large polygon's edges are passed over by
        // comparing degrees, without projecting them.
        let path = prunesEdges ? EdgeWindow(around: plane, x: 0, y: 0, toX: dx, y: dy, reach: 0) : .everywhere
        var crossings: [Double] = []
        forEachEdge(in: plane, meeting: path) { ex0, ey0, ex1, ey1 in
            // Where the path meets the edge: t along the path, u along the edge, both in 0...1.
            let ux = ex1 - ex0
            let uy = ey1 - ey0
            let denominator = dx * uy - dy * ux
            guard denominator != 0 else { return }
            let t = (ex0 * uy - ey0 * ux) / denominator
            let u = (ex0 * dy - ey0 * dx) / denominator
            if (0...1).contains(t) && (0...1).contains(u) { crossings.append(t) }
        }
        if crossings.isEmpty { return false }
        crossings.sort()
        for index in stride(from: 0, to: crossings.count - 1, by: 2) {
            let t = (crossings[index] + crossings[index + 1]) / 2
            let longitude = LocalPlane.wrapped(plane.longitude + t * dx / plane.metresPerDegreeEast)
            let latitude = plane.latitude + t * dy / LocalPlane.metresPerDegree
            if contains(longitude: longitude, latitude: latitude)
                && !hasEdge(within: margin, ofX: t * dx, y: t * dy, in: plane, prunesEdges: prunesEdges)
            {
                return true
            }
        }
        return pathPassesInsideExactly(
            plane: plane,
            dx: dx,
            dy: dy,
            lengthSquared: lengthSquared,
            margin: margin,
            prunesEdges: prunesEdges
        )
    }

    /// Calls `body` with the ends, in `plane`, of each edge whose longitude/latitude box meets `window`.
    @inline(__always)
    private func forEachEdge(
        in plane: LocalPlane,
        meeting window: EdgeWindow,
        _ body: (Double, Double, Double, Double) -> Void
    ) {
        walkEdges { x0, y0, x1, y1 in
            if min(y0, y1) > window.north || max(y0, y1) < window.south { return true }
            if window.filtersLongitudes && (min(x0, x1) > window.east || max(x0, x1) < window.west) { return true }
            body(plane.x(longitude: x0), plane.y(latitude: y0), plane.x(longitude: x1), plane.y(latitude: y1))
            return true
        }
    }

    /// Whether some edge comes within `margin` metres of the point (x, y) of `plane`, or exactly to it.
    private func hasEdge(
        within margin: Double,
        ofX x: Double,
        y: Double,
        in plane: LocalPlane,
        prunesEdges: Bool
    ) -> Bool {
        var found = false
        let window = prunesEdges ? EdgeWindow(around: plane, x: x, y: y, toX: x, y: y, reach: margin) : .everywhere
        forEachEdge(in: plane, meeting: window) { ex0, ey0, ex1, ey1 in
            if !found && PlaneSegment(ax: ex0 - x, ay: ey0 - y, bx: ex1 - x, by: ey1 - y).distanceFromOrigin() <= margin
            {
                found = true
            }
        }
        return found
    }

    /// The exact test of ``pathPassesInside(from:to:margin:)``, by the capsules of the edges.
    private func pathPassesInsideExactly(
        plane: LocalPlane,
        dx: Double,
        dy: Double,
        lengthSquared: Double,
        margin: Double,
        prunesEdges: Bool
    ) -> Bool {
        var covered: [(low: Double, high: Double)] = []
        // An edge whose box is further than `margin` from the path's box has no capsule on the path.
        let path = prunesEdges ? EdgeWindow(around: plane, x: 0, y: 0, toX: dx, y: dy, reach: margin) : .everywhere
        forEachEdge(in: plane, meeting: path) { ex0, ey0, ex1, ey1 in
            if let chord = Self.chordThroughCapsule(
                dx: dx,
                dy: dy,
                lengthSquared: lengthSquared,
                ex0: ex0,
                ey0: ey0,
                ex1: ex1,
                ey1: ey1,
                radius: margin
            ), chord.high >= 0, chord.low <= 1 {
                covered.append((max(0, chord.low), min(1, chord.high)))
            }
        }
        covered.sort { $0.low < $1.low }
        var reached = 0.0
        var stretches: [(Double, Double)] = []
        for interval in covered {
            if interval.low > reached { stretches.append((reached, interval.low)) }
            reached = max(reached, interval.high)
        }
        if reached < 1 { stretches.append((reached, 1)) }
        for (low, high) in stretches {
            let t = (low + high) / 2
            let longitude = LocalPlane.wrapped(plane.longitude + t * dx / plane.metresPerDegreeEast)
            let latitude = plane.latitude + t * dy / LocalPlane.metresPerDegree
            if contains(longitude: longitude, latitude: latitude) { return true }
        }
        return false
    }

    /// The values of t for which t * (dx, dy) lies within `radius` of the segment e0-e1: an interval, as the
    /// capsule is convex (the union of the chords through its two end discs and its rectangle); nil if none.
    private static func chordThroughCapsule(
        dx: Double,
        dy: Double,
        lengthSquared: Double,
        ex0: Double,
        ey0: Double,
        ex1: Double,
        ey1: Double,
        radius: Double
    ) -> (low: Double, high: Double)? {
        var low = Double.infinity
        var high = -Double.infinity
        func include(_ interval: (Double, Double)?) {
            guard let interval else { return }
            low = min(low, interval.0)
            high = max(high, interval.1)
        }
        include(chordThroughDisc(dx: dx, dy: dy, lengthSquared: lengthSquared, cx: ex0, cy: ey0, radius: radius))
        include(chordThroughDisc(dx: dx, dy: dy, lengthSquared: lengthSquared, cx: ex1, cy: ey1, radius: radius))
        let ux = ex1 - ex0
        let uy = ey1 - ey0
        let edgeLength = (ux * ux + uy * uy).squareRoot()
        if edgeLength > 0 {
            // Along the edge: s(t) = (t*d - e0)·u/|u| in 0...|u|; across it: h(t) = (t*d - e0)·n in -r...r.
            let along = solveLinear(
                offset: -(ex0 * ux + ey0 * uy) / edgeLength,
                slope: (dx * ux + dy * uy) / edgeLength,
                within: 0,
                edgeLength
            )
            let across = solveLinear(
                offset: -(ex0 * -uy + ey0 * ux) / edgeLength,
                slope: (dx * -uy + dy * ux) / edgeLength,
                within: -radius,
                radius
            )
            if let along, let across {
                let overlapLow = max(along.0, across.0)
                let overlapHigh = min(along.1, across.1)
                if overlapLow <= overlapHigh { include((overlapLow, overlapHigh)) }
            }
        }
        return low <= high ? (low, high) : nil
    }

    /// The t with |t * (dx, dy) - c| <= radius.
    private static func chordThroughDisc(
        dx: Double,
        dy: Double,
        lengthSquared: Double,
        cx: Double,
        cy: Double,
        radius: Double
    ) -> (Double, Double)? {
        let b = dx * cx + dy * cy
        let c = cx * cx + cy * cy - radius * radius
        let discriminant = b * b - lengthSquared * c
        guard discriminant >= 0 else { return nil }
        let root = discriminant.squareRoot()
        return ((b - root) / lengthSquared, (b + root) / lengthSquared)
    }

    /// The t with lower <= offset + slope * t <= upper (all t, or none, when the slope is 0).
    private static func solveLinear(
        offset: Double,
        slope: Double,
        within lower: Double,
        _ upper: Double
    ) -> (Double, Double)? {
        if slope == 0 {
            return (lower...upper).contains(offset) ? (-Double.infinity, Double.infinity) : nil
        }
        let first = (lower - offset) / slope
        let second = (upper - offset) / slope
        return (min(first, second), max(first, second))
    }
}
