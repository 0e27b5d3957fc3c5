/// A point on the Earth in WGS 84 degrees.
///
/// Always valid: latitude in -90...90, longitude in -180...180, both finite.
public struct Coordinate: Hashable, Sendable, CustomStringConvertible {
    public let latitude: Double
    public let longitude: Double

    /// A coordinate, or nil when either value is out of range or not finite.
    public init?(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90.0...90.0).contains(latitude),
            (-180.0...180.0).contains(longitude)
        else { return nil }
        self.latitude = latitude
        self.longitude = longitude
    }

    public var description: String { "(\(latitude), \(longitude))" }
}

extension Coordinate {
    /// Mean Earth radius (IUGG), in metres: the sphere the distances are measured on.
    public static let earthRadius = 6_371_008.8

    /// Great-circle distance in metres (haversine on the mean-radius sphere; within 0.5 % of the
    /// ellipsoid everywhere, which is well inside GPS accuracy for geofences).
    ///
    /// Correct across the antimeridian and at the poles: the formula works on angle differences
    /// through sines, so 179.9° and -179.9° are 0.2° apart, and every longitude at a pole is one point.
    public func distance(to other: Coordinate) -> Double {
        let toRadians = Double.pi / 180
        let phi1 = latitude * toRadians
        let phi2 = other.latitude * toRadians
        let halfDeltaPhi = (phi2 - phi1) / 2
        let halfDeltaLambda = (other.longitude - longitude) * toRadians / 2
        let sinPhi = _sin(halfDeltaPhi)
        let sinLambda = _sin(halfDeltaLambda)
        let a = sinPhi * sinPhi + _cos(phi1) * _cos(phi2) * sinLambda * sinLambda
        // min() guards against rounding pushing `a` just above 1 for antipodal points.
        return 2 * Self.earthRadius * _asin(min(1, a.squareRoot()))
    }
}
