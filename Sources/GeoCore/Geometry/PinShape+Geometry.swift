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

    /// What a fix with hysteresis `margin` decides: inside when it lies inside at least `margin` from the edge, outside
    /// when outside more than `margin` from it, nil in between.
    ///
    /// The same answer as ``placement(of:plane:knownInside:)`` gives, without measuring every edge of a polygon.
    public func decision(at coordinate: Coordinate, margin: Double, plane: LocalPlane) -> Membership? {
        switch self {
        case .circle(let center, let radius):
            // Most fixes lie well off the band where the hysteresis decides nothing: the plane's bounds of the
            // distance decide them without the haversine's sines and arcsine, which every fix of every pin would pay.
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
    /// - Parameters:
    ///   - coordinate: the point.
    ///   - plane: the plane tangent at the point, in which distances are measured.
    ///   - knownInside: whether the point is inside, when the caller has decided it already (a polygon's
    ///     inside test is then not made again).
    /// - Returns: inside or not, and the distance to the edge in metres.
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
