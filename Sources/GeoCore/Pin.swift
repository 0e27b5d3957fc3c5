/// A circular geofence a device asked to watch: a "tracked pin".
public struct Pin: Hashable, Sendable {
    /// Radii a pin may have, in metres: from a doorway to a metropolitan area.
    public static let radiusRange: ClosedRange<Double> = 1...100_000
    /// The longest pin id, in UTF-8 bytes.
    public static let maximumIdLength = 256

    /// Unique among the pins of one device.
    public let id: String
    public let center: Coordinate
    /// In metres, within ``radiusRange``.
    public let radius: Double
    public let title: String?
    /// Free metadata as the JSON text the command carried (an object), passed through to events as is.
    public let metadataJSON: String?

    /// A pin, or nil when the id is empty or too long or the radius is outside ``radiusRange``.
    public init?(id: String, center: Coordinate, radius: Double, title: String? = nil, metadataJSON: String? = nil) {
        guard !id.isEmpty, id.utf8.count <= Self.maximumIdLength, Self.radiusRange.contains(radius) else {
            return nil
        }
        self.id = id
        self.center = center
        self.radius = radius
        self.title = title
        self.metadataJSON = metadataJSON
    }
}
