/// A geofence a device asked to watch: a "tracked pin", a circle or a polygon.
public struct Pin: Hashable, Sendable {
    /// Radii a circle may have, in metres: from a doorway to a metropolitan area.
    public static let radiusRange: ClosedRange<Double> = 1...100_000
    /// The longest pin id, in UTF-8 bytes.
    public static let maximumIdLength = 256
    /// Dwell thresholds a pin may ask for, in seconds: up to a week.
    public static let dwellRange: ClosedRange<Int> = 1...604_800
    /// Approach horizons a pin may ask for, in seconds: up to a day.
    public static let approachRange: ClosedRange<Int> = 1...86_400

    /// Unique among the pins of one device.
    public let id: String
    public let shape: PinShape
    /// What most pins leave out, behind one reference: a plain pin costs 8 bytes for all four instead of 64,
    /// which a million devices with three pins each feel.
    private let details: PinDetails?

    public var title: String? { details?.title }
    /// Free metadata as the JSON text the command carried (an object), passed through to events as is.
    public var metadataJSON: String? { details?.metadataJSON }
    /// Announce `geofence.dwelled` once the device has been inside this long (by message time), once per visit.
    public var dwellSeconds: Int? { details?.dwellSeconds }
    /// Announce `geofence.approaching` once the device, heading towards the pin, is at most this many seconds
    /// from its edge at its speed.
    public var approachSeconds: Int? { details?.approachSeconds }

    /// A pin, or nil when the id is empty or too long, a circle's radius is outside ``radiusRange``, or a
    /// dwell or approach time is outside its range.
    public init?(
        id: String,
        shape: PinShape,
        title: String? = nil,
        metadataJSON: String? = nil,
        dwellSeconds: Int? = nil,
        approachSeconds: Int? = nil
    ) {
        guard !id.isEmpty, id.utf8.count <= Self.maximumIdLength else { return nil }
        if case .circle(_, let radius) = shape, !Self.radiusRange.contains(radius) { return nil }
        if let dwellSeconds, !Self.dwellRange.contains(dwellSeconds) { return nil }
        if let approachSeconds, !Self.approachRange.contains(approachSeconds) { return nil }
        self.id = id
        self.shape = shape
        let details = PinDetails(
            title: title,
            metadataJSON: metadataJSON,
            dwellSeconds: dwellSeconds,
            approachSeconds: approachSeconds
        )
        self.details = details.isEmpty ? nil : details
    }

    /// A circular pin; see ``init(id:shape:title:metadataJSON:dwellSeconds:approachSeconds:)``.
    public init?(
        id: String,
        center: Coordinate,
        radius: Double,
        title: String? = nil,
        metadataJSON: String? = nil,
        dwellSeconds: Int? = nil,
        approachSeconds: Int? = nil
    ) {
        self.init(
            id: id,
            shape: .circle(center: center, radius: radius),
            title: title,
            metadataJSON: metadataJSON,
            dwellSeconds: dwellSeconds,
            approachSeconds: approachSeconds
        )
    }

    /// How many polygon vertices the pin holds (0 for a circle): what the vertex limits count.
    public var vertexCount: Int {
        switch shape {
        case .circle: 0
        case .polygon(let polygon): polygon.vertexCount
        }
    }
}

/// A pin's optional parts, immutable and shared by every copy of the pin.
private final class PinDetails: Hashable, Sendable {
    let title: String?
    let metadataJSON: String?
    let dwellSeconds: Int?
    let approachSeconds: Int?

    init(title: String?, metadataJSON: String?, dwellSeconds: Int?, approachSeconds: Int?) {
        self.title = title
        self.metadataJSON = metadataJSON
        self.dwellSeconds = dwellSeconds
        self.approachSeconds = approachSeconds
    }

    var isEmpty: Bool { title == nil && metadataJSON == nil && dwellSeconds == nil && approachSeconds == nil }

    static func == (lhs: PinDetails, rhs: PinDetails) -> Bool {
        lhs.title == rhs.title && lhs.metadataJSON == rhs.metadataJSON && lhs.dwellSeconds == rhs.dwellSeconds
            && lhs.approachSeconds == rhs.approachSeconds
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(title)
        hasher.combine(metadataJSON)
        hasher.combine(dwellSeconds)
        hasher.combine(approachSeconds)
    }
}
