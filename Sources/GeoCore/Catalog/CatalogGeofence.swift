/// A geofence of the fleet's catalog (`topics.geofences`): what a pin has (its id, circle or polygon, title, metadata,
/// dwell and approach times) and the tags devices subscribe to.
public struct CatalogGeofence: Hashable, Sendable {
    /// The most tags a geofence may carry.
    public static let maximumTags = 32
    /// The longest tag, in UTF-8 bytes.
    public static let maximumTagLength = 64

    /// The geofence as the rules see a pin; its id is the catalog record's key.
    public let geofence: Pin
    /// Sorted, each once.
    public private(set) var tags: [String]

    public var id: String { geofence.id }

    /// A catalog geofence, or nil when it has no tag, more than ``maximumTags``, or a tag empty or longer than
    /// ``maximumTagLength``: a geofence no tag reaches is one no device can subscribe to.
    public init?(geofence: Pin, tags: [String]) {
        let tags = Array(Set(tags)).sorted()
        guard !tags.isEmpty, tags.count <= Self.maximumTags,
            tags.allSatisfy({ !$0.isEmpty && $0.utf8.count <= Self.maximumTagLength })
        else { return nil }
        self.geofence = geofence
        self.tags = tags
    }

    /// The same geofence with `tags`, equal to its own (the catalog's shared copy of them).
    func sharing(_ tags: [String]) -> CatalogGeofence {
        var copy = self
        copy.tags = tags
        return copy
    }

    /// The longitude/latitude box the geofence lies in; a circle that crosses the antimeridian or reaches a pole
    /// takes every longitude (the grid files boxes that never cross it).
    var box: CatalogGrid.Box {
        switch geofence.shape {
        case .polygon(let polygon):
            let bounds = polygon.bounds
            return CatalogGrid.Box(west: bounds.west, south: bounds.south, east: bounds.east, north: bounds.north)
        case .circle(let center, let radius):
            // Slightly wider than the circle: the boxes only choose which geofences the rules look at.
            let latitudeSpan = radius / LocalPlane.metresPerDegree * 1.01
            let south = max(-90, center.latitude - latitudeSpan)
            let north = min(90, center.latitude + latitudeSpan)
            let widest = max(abs(south), abs(north))
            let cosine = _cos(widest * .pi / 180)
            let longitudeSpan = cosine > 1e-9 ? latitudeSpan / cosine : 360
            let west = center.longitude - longitudeSpan
            let east = center.longitude + longitudeSpan
            if widest >= 90 || west < -180 || east > 180 {
                return CatalogGrid.Box(west: -180, south: south, east: 180, north: north)
            }
            return CatalogGrid.Box(west: west, south: south, east: east, north: north)
        }
    }
}
