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
