// The polygon's geometry: inside or outside, distances to its edges, and whether a path between two fixes
// passes inside. The type and its construction are in PolygonShape.swift.

extension PolygonShape {
    /// Whether the point lies inside the shape (inside an outer ring and in none of its holes), in the
    /// longitude/latitude plane.
    ///
    /// Points exactly on an edge may go either way: the geofence rules never decide within the fix's accuracy of an
    /// edge.
    public func contains(longitude: Double, latitude: Double) -> Bool {
        guard latitude >= bounds.south && latitude <= bounds.north else { return false }
        // In the vertices' own units: the test is the same at any scale, and no vertex is converted.
        let longitude = longitude * Self.unitsPerDegree
        let latitude = latitude * Self.unitsPerDegree
        return storage.units.withUnsafeBufferPointer { units in
            for polygon in 0..<polygonEnds.count {
                // Crossing-number test over the polygon's rings: a ray going east from the point crosses its
                // boundary (outer ring and holes) an odd number of times when the point is inside.
                var inside = false
                for ring in polygonRange(polygon) {
                    let range = ringRange(ring)
                    var previous = range.upperBound - 1
                    for index in range {
                        let y1 = Double(units[2 * index + 1])
                        let y0 = Double(units[2 * previous + 1])
                        if (y1 > latitude) != (y0 > latitude) {
                            let x1 = Double(units[2 * index])
                            let x0 = Double(units[2 * previous])
                            if longitude < x1 + (latitude - y1) / (y0 - y1) * (x0 - x1) { inside.toggle() }
                        }
                        previous = index
                    }
                }
                if inside { return true }
            }
            return false
        }
    }

    /// Whether some edge lies within `margin` metres of the point (closer than it, or also exactly at it when
    /// `inclusive`), as ``nearestEdge(to:)`` measures.
    ///
    /// Faster than measuring: edges whose longitudes or latitudes keep them further than `margin` away are passed over
    /// by comparing degrees.
    func hasEdge(within margin: Double, inclusive: Bool, of plane: LocalPlane) -> Bool {
        let latitudeReach = margin / LocalPlane.metresPerDegree * 1.001
        let longitudeReach = plane.metresPerDegreeEast > 0 ? margin / plane.metresPerDegreeEast * 1.001 : 360
        // Near the antimeridian the plane wraps longitudes: compare them there the slow way.
        let filterLongitudes = abs(plane.longitude) + longitudeReach < 180
        let low = plane.latitude - latitudeReach
        let high = plane.latitude + latitudeReach
        guard high >= bounds.south && low <= bounds.north else { return false }
        let walkedAll = walkEdges { x0, y0, x1, y1 in
            if min(y0, y1) > high || max(y0, y1) < low { return true }
            if filterLongitudes
                && (min(x0, x1) - longitudeReach > plane.longitude || max(x0, x1) + longitudeReach < plane.longitude)
            {
                return true
            }
            let edge = PlaneSegment(
                ax: plane.x(longitude: x0),
                ay: plane.y(latitude: y0),
                bx: plane.x(longitude: x1),
                by: plane.y(latitude: y1)
            )
            let distance = edge.distanceFromOrigin()
            return !(distance < margin || (inclusive && distance == margin))
        }
        return !walkedAll
    }

    /// The distance in metres from the point to the nearest edge (outer or hole), in the plane tangent at
    /// the point, and that nearest point of the edge in the same plane.
    public func nearestEdge(to plane: LocalPlane) -> (distance: Double, x: Double, y: Double) {
        // Within reach of the antimeridian the plane wraps longitudes: no pruning by them there.
        let wrapsNear = bounds.west - plane.longitude < -180 || bounds.east - plane.longitude > 180
        var best = Double.infinity
        var bestX = 0.0
        var bestY = 0.0
        walkEdges { x0, y0, x1, y1 in
            // An edge whose latitudes and longitudes keep it further than the nearest so far is passed over (its
            // box's distance, a lower bound of its own).
            let latitudeGap = max(0, min(y0, y1) - plane.latitude, plane.latitude - max(y0, y1))
            let northGap = latitudeGap * LocalPlane.metresPerDegree
            let longitudeGap = wrapsNear ? 0 : max(0, min(x0, x1) - plane.longitude, plane.longitude - max(x0, x1))
            let eastGap = longitudeGap * plane.metresPerDegreeEast
            if northGap * northGap + eastGap * eastGap >= best { return true }
            let ax = plane.x(longitude: x0)
            let ay = plane.y(latitude: y0)
            let bx = plane.x(longitude: x1)
            let by = plane.y(latitude: y1)
            // The nearest point of segment a-b to the origin (the point itself).
            let dx = bx - ax
            let dy = by - ay
            let lengthSquared = dx * dx + dy * dy
            var t = lengthSquared > 0 ? -(ax * dx + ay * dy) / lengthSquared : 0
            t = min(1, max(0, t))
            let px = ax + t * dx
            let py = ay + t * dy
            let distanceSquared = px * px + py * py
            if distanceSquared < best {
                best = distanceSquared
                bestX = px
                bestY = py
            }
            return true
        }
        return (best.squareRoot(), bestX, bestY)
    }

    /// A lower bound of the distance in metres from the point to the shape: its distance to ``bounds``.
    ///
    /// Cheap, so that pins far from a fix cost no more than a circle's.
    func distanceToBounds(from plane: LocalPlane) -> Double {
        let latitudeGap = max(0, bounds.south - plane.latitude, plane.latitude - bounds.north)
        var longitudeGap = 0.0
        if plane.longitude < bounds.west || plane.longitude > bounds.east {
            // The way round the globe that is shorter, as the plane measures it.
            longitudeGap = min(
                LocalPlane.wrapped(bounds.west - plane.longitude).magnitude,
                LocalPlane.wrapped(plane.longitude - bounds.east).magnitude
            )
        }
        return max(latitudeGap * LocalPlane.metresPerDegree, longitudeGap * plane.metresPerDegreeEast)
    }
}

extension PolygonShape.Bounds {
    /// Whether the point lies inside the box by more than `margin` metres on every side, measured in `plane`
    /// (the plane tangent at the point).
    func contains(_ plane: LocalPlane, by margin: Double) -> Bool {
        let latitudeMargin = margin / LocalPlane.metresPerDegree
        guard plane.latitude - latitudeMargin > south && plane.latitude + latitudeMargin < north else { return false }
        guard plane.metresPerDegreeEast > 0 else { return false }
        let longitudeMargin = margin / plane.metresPerDegreeEast
        return plane.longitude - longitudeMargin > west && plane.longitude + longitudeMargin < east
    }
}

extension PolygonShape.Bounds {
    /// The box less `margin` metres on every side as `plane` measures them, and a centimetre more; nil when
    /// nothing is left.
    func shrunk(by margin: Double, in plane: LocalPlane) -> Self? {
        guard plane.metresPerDegreeEast > 0 else { return nil }
        let slack = 1e-7  // degrees: about a centimetre
        let latitudeMargin = margin / LocalPlane.metresPerDegree * 1.001 + slack
        let longitudeMargin = margin / plane.metresPerDegreeEast * 1.001 + slack
        guard north - south > 2 * latitudeMargin, east - west > 2 * longitudeMargin else { return nil }
        return Self(
            west: west + longitudeMargin,
            south: south + latitudeMargin,
            east: east - longitudeMargin,
            north: north - latitudeMargin
        )
    }

    /// Whether the segment (straight in longitude/latitude) meets the box: the segment clipped to the box's four sides
    /// in turn (Liang-Barsky).
    ///
    /// Segments across the antimeridian are assumed to meet it.
    func mayMeetSegment(from start: Coordinate, to end: Coordinate) -> Bool {
        let dx = end.longitude - start.longitude
        let dy = end.latitude - start.latitude
        if abs(dx) > 180 { return true }
        var low = 0.0
        var high = 1.0
        // Keeps the part of the segment on the inner side of each of the box's four sides in turn: `delta` is
        // the segment's run towards that side, `room` how far its start is inside it.
        for side in 0..<4 {
            let delta: Double
            let room: Double
            switch side {
            case 0: (delta, room) = (-dx, start.longitude - west)
            case 1: (delta, room) = (dx, east - start.longitude)
            case 2: (delta, room) = (-dy, start.latitude - south)
            default: (delta, room) = (dy, north - start.latitude)
            }
            if delta == 0 {
                if room < 0 { return false }
                continue
            }
            let t = room / delta
            if delta < 0 { low = max(low, t) } else { high = min(high, t) }
            if low > high { return false }
        }
        return true
    }
}

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

    /// Walks the edges of every ring (outer rings and holes) until `body` returns false; says whether it went to the end.
    ///
    /// `body` gets an edge's ends in degrees: the previous vertex's longitude and latitude, then this one's (the first
    /// vertex's previous is the ring's last). Inlined so that each caller's `body` becomes its own loop, its filters before any projection.
    @inline(__always)
    @discardableResult
    private func walkEdges(_ body: (_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> Bool) -> Bool {
        // Multiplied rather than divided, for speed: within a unit in the last place of ``vertex(_:)``'s degrees.
        let degreesPerUnit = 1 / Self.unitsPerDegree
        return storage.units.withUnsafeBufferPointer { units in
            for ring in 0..<ringEnds.count {
                let range = ringRange(ring)
                var previous = range.upperBound - 1
                for index in range {
                    defer { previous = index }
                    let x0 = Double(units[2 * previous]) * degreesPerUnit
                    let y0 = Double(units[2 * previous + 1]) * degreesPerUnit
                    let x1 = Double(units[2 * index]) * degreesPerUnit
                    let y1 = Double(units[2 * index + 1]) * degreesPerUnit
                    if !body(x0, y0, x1, y1) { return false }
                }
            }
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
