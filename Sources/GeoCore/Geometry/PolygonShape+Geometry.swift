// The polygon's geometry at a point: inside or outside, distances to its edges. Whether a path between two fixes
// passes inside is in PolygonShape+Path.swift; the type and its construction in PolygonShape.swift.

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
    /// Walks the edges of every ring (outer rings and holes) until `body` returns false; says whether it went to the end.
    ///
    /// `body` gets an edge's ends in degrees: the previous vertex's longitude and latitude, then this one's (the first
    /// vertex's previous is the ring's last). Inlined so that each caller's `body` becomes its own loop, its filters before any projection.
    @inline(__always)
    @discardableResult
    func walkEdges(_ body: (_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> Bool) -> Bool {
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
}
