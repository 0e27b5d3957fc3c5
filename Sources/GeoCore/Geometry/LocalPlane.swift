/// A plane tangent to the Earth at a point (an equirectangular projection scaled at the point's latitude), in
/// metres east (`x`) and north (`y`) of it.
///
/// It maps lines that are straight in longitude and latitude (GeoJSON's edges) to straight lines, so distances
/// to polygon edges are distances to segments; near the point it agrees with distances on the sphere to well
/// under a percent over tens of kilometres (less so towards the poles, where a degree of longitude shrinks).
public struct LocalPlane: Hashable, Sendable {
    /// Metres in one degree of latitude on the distance sphere (``Coordinate/earthRadius``).
    public static let metresPerDegree = Coordinate.earthRadius * Double.pi / 180

    public let latitude: Double
    public let longitude: Double
    /// Metres in one degree of longitude at the point's latitude.
    public let metresPerDegreeEast: Double

    public init(at coordinate: Coordinate) {
        latitude = coordinate.latitude
        longitude = coordinate.longitude
        metresPerDegreeEast = Self.metresPerDegree * _cos(coordinate.latitude * Double.pi / 180)
    }

    /// Metres east of the point; longitudes are taken the short way round, so the plane works across the
    /// antimeridian.
    @inline(__always)
    public func x(longitude other: Double) -> Double { Self.wrapped(other - longitude) * metresPerDegreeEast }

    /// Metres north of the point.
    @inline(__always)
    public func y(latitude other: Double) -> Double { (other - latitude) * Self.metresPerDegree }

    /// A longitude difference brought into -180...180.
    @inline(__always)
    static func wrapped(_ degrees: Double) -> Double {
        if degrees > 180 { return degrees - 360 }
        if degrees < -180 { return degrees + 360 }
        return degrees
    }

    /// The compass bearing (degrees clockwise from north, 0..<360) of a point of the plane, seen from its origin.
    static func bearing(x: Double, y: Double) -> Double {
        let degrees = _atan2(x, y) * 180 / Double.pi
        return degrees < 0 ? degrees + 360 : degrees
    }
}

extension LocalPlane {
    /// Bounds of the great-circle distance (``Coordinate/distance(to:)``) from the plane's origin to the point
    /// `x` metres east and `y` metres north of it, from the plane's distance alone, without a sine or a cosine:
    /// nil when the point is too far or the origin too near a pole for the plane to say it tightly.
    ///
    /// Why they hold. With Δφ, Δλ the latitude and longitude differences in radians and φ the origin's
    /// latitude, the haversine reads hav(d/R) = sin²(Δφ/2) + cos φ cos(φ + Δφ) sin²(Δλ/2), the plane's distance
    /// p² = (R Δφ)² + (R cos φ Δλ)². Each sin²(x/2) lies within a factor 1 - x²/12 of (x/2)²; cos(φ + Δφ) / cos φ
    /// = cos Δφ - tan φ sin Δφ lies within |Δφ| / cos φ + Δφ²/2 of 1; so hav(d/R) = (p / 2R)² (1 + e) with
    /// |e| ≤ η = |Δφ| / cos φ + Δφ² + Δλ²/6. And asin(s) lies between s and s (1 + s²/5) for small s. Hence
    /// p (1 - η) ≤ d ≤ p (1 + η + (p/R)²). Both are widened by a micrometre and a billionth for the rounding
    /// of both computations (a few nanometres at these distances), so that a decision taken on the bounds is
    /// the one the haversine's own value takes.
    func distanceBounds(toX x: Double, y: Double) -> (low: Double, high: Double)? {
        let cosine = metresPerDegreeEast / Self.metresPerDegree
        let radius = Coordinate.earthRadius
        guard cosine >= 0.01 else { return nil }
        let deltaPhi = abs(y) / radius
        let deltaLambda = abs(x) / (radius * cosine)
        let planeDistance = (x * x + y * y).squareRoot()
        let ratio = planeDistance / radius
        let spread = deltaPhi / cosine + deltaPhi * deltaPhi + deltaLambda * deltaLambda / 6 + ratio * ratio + 1e-9
        // Beyond a percent the series behind the bounds are no longer small; the caller measures exactly.
        guard spread <= 0.01, deltaLambda <= 0.01 else { return nil }
        return (planeDistance * (1 - spread) - 1e-6, planeDistance * (1 + spread) + 1e-6)
    }
}
