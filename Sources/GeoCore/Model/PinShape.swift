/// The area of a pin.
public enum PinShape: Hashable, Sendable {
    /// All points within `radius` metres of `center` on the distance sphere.
    case circle(center: Coordinate, radius: Double)
    /// A GeoJSON Polygon or MultiPolygon.
    case polygon(PolygonShape)
}
