/// Where a point is relative to a pin's edge.
struct PinPlacement {
    let inside: Bool
    /// Metres from the point to the nearest point of the pin's edge.
    let edgeDistance: Double
    /// That nearest point, in metres east and north of the point (``LocalPlane``): the direction of the pin.
    let nearestX: Double
    let nearestY: Double
}

extension PinShape {
    /// A lower bound of the metres from the point to the pin's area (0 when it may be inside): lets the rules
    /// skip pins far from a fix with a few multiplications, whatever the pin's shape.
    func distanceLowerBound(from coordinate: Coordinate, plane: LocalPlane) -> Double {
        switch self {
        case .circle(let center, let radius):
            // The latitude difference alone is a lower bound of the distance on the sphere; slightly shortened
            // so that it stays one against the haversine's rounding.
            let latitudeGap = abs(coordinate.latitude - center.latitude) * LocalPlane.metresPerDegree * 0.999
            return max(0, latitudeGap - radius)
        case .polygon(let polygon):
            return polygon.distanceToBounds(from: plane) * 0.999
        }
    }

    /// What a fix with hysteresis `margin` decides: inside when it lies inside at least `margin` from the
    /// edge, outside when outside more than `margin` from it, nil in between. The same answer as
    /// ``placement(of:plane:)`` gives, without measuring every edge of a polygon.
    public func decision(at coordinate: Coordinate, margin: Double, plane: LocalPlane) -> Membership? {
        switch self {
        case .circle(let center, let radius):
            // Most fixes lie well off the band where the hysteresis decides nothing: the plane's bounds of the
            // distance decide them without the haversine's sines and arcsine (a tenth of an apply thread's time
            // went to them).
            if let bounds = plane.distanceBounds(
                toX: plane.x(longitude: center.longitude),
                y: plane.y(latitude: center.latitude)
            ) {
                if bounds.high < radius - margin && bounds.high < radius { return .inside }
                if bounds.low > radius + margin && bounds.low >= radius { return .outside }
                if bounds.low > radius - margin && bounds.high <= radius + margin { return nil }
            }
            let placement = placement(of: coordinate, plane: plane)
            if placement.inside { return placement.edgeDistance >= margin ? .inside : nil }
            return placement.edgeDistance > margin ? .outside : nil
        case .polygon(let polygon):
            if let inner = polygon.innerBox, inner.contains(plane, by: margin) { return .inside }
            if polygon.contains(longitude: coordinate.longitude, latitude: coordinate.latitude) {
                return polygon.hasEdge(within: margin, inclusive: false, of: plane) ? nil : .inside
            }
            return polygon.hasEdge(within: margin, inclusive: true, of: plane) ? nil : .outside
        }
    }

    /// Whether the point is inside and how far it is from the edge.
    ///
    /// - Parameter knownInside: whether the point is inside, when the caller has decided it already (a polygon's
    ///   inside test is then not made again).
    func placement(of coordinate: Coordinate, plane: LocalPlane, knownInside: Bool? = nil) -> PinPlacement {
        switch self {
        case .circle(let center, let radius):
            let distance = coordinate.distance(to: center)
            return PinPlacement(
                inside: distance < radius,
                edgeDistance: abs(distance - radius),
                nearestX: plane.x(longitude: center.longitude),
                nearestY: plane.y(latitude: center.latitude)
            )
        case .polygon(let polygon):
            let nearest = polygon.nearestEdge(to: plane)
            return PinPlacement(
                inside: knownInside ?? polygon.contains(longitude: coordinate.longitude, latitude: coordinate.latitude),
                edgeDistance: nearest.distance,
                nearestX: nearest.x,
                nearestY: nearest.y
            )
        }
    }

    /// Whether the straight path from `start` to `end` may come within the pin by more than `margin`: a cheap
    /// test (the path against the pin's box), so that ``pathPassesInside(from:to:margin:)`` runs only for the
    /// paths that need it.
    func pathMayPassInside(from start: Coordinate, to end: Coordinate, margin: Double) -> Bool {
        switch self {
        case .circle(let center, let radius):
            let reach = max(0, radius - margin) / LocalPlane.metresPerDegree
            // Latitudes first: no trigonometry for the paths that pass north or south of the circle.
            if min(start.latitude, end.latitude) > center.latitude + reach
                || max(start.latitude, end.latitude) < center.latitude - reach
            {
                return false
            }
            let widest = min(89.9, abs(center.latitude) + reach)
            let east = reach / _cos(widest * Double.pi / 180)
            let box = PolygonShape.Bounds(
                west: center.longitude - east,
                south: center.latitude - reach,
                east: center.longitude + east,
                north: center.latitude + reach
            )
            return box.mayMeetSegment(from: start, to: end)
        case .polygon(let polygon):
            return polygon.bounds.mayMeetSegment(from: start, to: end)
        }
    }

    /// Whether the straight path from `start` to `end` passes through the pin by more than `margin` metres:
    /// some point of it lies inside, further than `margin` from every edge.
    func pathPassesInside(from start: Coordinate, to end: Coordinate, margin: Double) -> Bool {
        switch self {
        case .circle(let center, let radius):
            let plane = LocalPlane(at: center)
            let path = PlaneSegment(
                ax: plane.x(longitude: start.longitude),
                ay: plane.y(latitude: start.latitude),
                bx: plane.x(longitude: end.longitude),
                by: plane.y(latitude: end.latitude)
            )
            return path.distanceFromOrigin() <= radius - margin
        case .polygon(let polygon):
            return polygon.pathPassesInside(from: start, to: end, margin: margin)
        }
    }
}

extension PolygonShape.Bounds {
    /// Whether the segment (straight in longitude/latitude) meets the box: the segment clipped to the box's four
    /// sides in turn (Liang-Barsky). Segments across the antimeridian are assumed to meet it.
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

/// A segment in a ``LocalPlane``.
struct PlaneSegment {
    let ax: Double
    let ay: Double
    let bx: Double
    let by: Double

    /// The distance from the plane's origin to the nearest point of the segment.
    func distanceFromOrigin() -> Double {
        let dx = bx - ax
        let dy = by - ay
        let lengthSquared = dx * dx + dy * dy
        let t = lengthSquared > 0 ? min(1, max(0, -(ax * dx + ay * dy) / lengthSquared)) : 0
        let px = ax + t * dx
        let py = ay + t * dy
        return (px * px + py * py).squareRoot()
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
    func pathPassesInside(from start: Coordinate, to end: Coordinate, margin: Double) -> Bool {
        let plane = LocalPlane(at: start)
        // The path is t * (dx, dy) for t in 0...1.
        let dx = plane.x(longitude: end.longitude)
        let dy = plane.y(latitude: end.latitude)
        let lengthSquared = dx * dx + dy * dy
        guard lengthSquared > 0 else { return false }
        var crossings: [Double] = []
        forEachEdge(in: plane) { ex0, ey0, ex1, ey1 in
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
                && nearestEdgeDistance(toX: t * dx, y: t * dy, in: plane) > margin
            {
                return true
            }
        }
        return pathPassesInsideExactly(plane: plane, dx: dx, dy: dy, lengthSquared: lengthSquared, margin: margin)
    }

    /// Calls `body` with each edge's ends in `plane`.
    @inline(__always)
    private func forEachEdge(in plane: LocalPlane, _ body: (Double, Double, Double, Double) -> Void) {
        storage.vertices.withUnsafeBufferPointer { vertices in
            for ring in 0..<ringEnds.count {
                let range = ringRange(ring)
                let last = range.upperBound - 1
                var ex0 = plane.x(longitude: vertices[2 * last])
                var ey0 = plane.y(latitude: vertices[2 * last + 1])
                for index in range {
                    let ex1 = plane.x(longitude: vertices[2 * index])
                    let ey1 = plane.y(latitude: vertices[2 * index + 1])
                    body(ex0, ey0, ex1, ey1)
                    ex0 = ex1
                    ey0 = ey1
                }
            }
        }
    }

    /// The distance from the point (x, y) of `plane` to the nearest edge.
    private func nearestEdgeDistance(toX x: Double, y: Double, in plane: LocalPlane) -> Double {
        var best = Double.infinity
        forEachEdge(in: plane) { ex0, ey0, ex1, ey1 in
            let edge = PlaneSegment(ax: ex0 - x, ay: ey0 - y, bx: ex1 - x, by: ey1 - y)
            best = min(best, edge.distanceFromOrigin())
        }
        return best
    }

    /// The exact test of ``pathPassesInside(from:to:margin:)``, by the capsules of the edges.
    private func pathPassesInsideExactly(
        plane: LocalPlane,
        dx: Double,
        dy: Double,
        lengthSquared: Double,
        margin: Double
    ) -> Bool {
        var covered: [(low: Double, high: Double)] = []
        forEachEdge(in: plane) { ex0, ey0, ex1, ey1 in
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
