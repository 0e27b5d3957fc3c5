/// What the geofence rules keep of one catalog geofence for one device: what a tracked pin keeps, without the pin,
/// which the catalog holds once for every device.
public struct CatalogVisit: Hashable, Sendable {
    public var membership: Membership
    /// The message time of the fix that decided `membership` (a visit's start, which a dwell is measured from).
    public var since: Int64?
    public var dwellAnnounced: Bool
    public var approachAnnounced: Bool
    /// While an announced approach is under way: when the device is expected at the geofence's edge.
    public var approachArrival: Int64?

    public init(
        membership: Membership,
        since: Int64? = nil,
        dwellAnnounced: Bool = false,
        approachAnnounced: Bool = false,
        approachArrival: Int64? = nil
    ) {
        self.membership = membership
        self.since = since
        self.dwellAnnounced = dwellAnnounced
        self.approachAnnounced = approachAnnounced
        self.approachArrival = approachArrival
    }

    /// The state a tracked pin keeps of its pin, which this visit keeps of a catalog geofence.
    init(_ tracked: TrackedPin) {
        self.init(
            membership: tracked.membership,
            since: tracked.since,
            dwellAnnounced: tracked.dwellAnnounced,
            approachAnnounced: tracked.approachAnnounced,
            approachArrival: tracked.approachArrival
        )
    }

    /// The visit as a tracked pin of `geofence`: what the pin rules and the status card take.
    func tracked(_ geofence: Pin) -> TrackedPin {
        TrackedPin(
            pin: geofence,
            membership: membership,
            since: since,
            dwellAnnounced: dwellAnnounced,
            approachAnnounced: approachAnnounced,
            approachArrival: approachArrival
        )
    }

    /// Whether there is nothing to keep: outside, no approach under way.
    ///
    /// Every catalog geofence a device has not met stands so, at no cost.
    var isOutsideOnly: Bool { membership == .outside && !approachAnnounced }
}

/// A device's standing with the fleet's catalog: the tags it subscribes to, and a visit for each catalog geofence it is
/// not simply outside of (inside, undecided near an edge, or approaching), never a copy of the geofence.
public struct CatalogVisits: Hashable, Sendable {
    /// The tags the device subscribed to, sorted, each once.
    public private(set) var subscriptions: [String]
    /// By catalog geofence id.
    public internal(set) var visits: [String: CatalogVisit]
    /// The message time of the device's last fix decided against the catalog: a geofence version in force only after
    /// it is met for the first time at the next fix (its initial state is announced); one in force before it is one
    /// the device was outside of, unless a visit says otherwise.
    public internal(set) var decidedAt: Int64? {
        get { decidedAtOrMin == .min ? nil : decidedAtOrMin }
        set { decidedAtOrMin = newValue ?? .min }
    }
    // `Int64.min` for none: an `Int64?` takes 16 bytes where an `Int64` takes 8, and every device of a fleet on the
    // catalog holds one.
    private var decidedAtOrMin: Int64

    public init(subscriptions: [String] = [], visits: [String: CatalogVisit] = [:], decidedAt: Int64? = nil) {
        self.subscriptions = Array(Set(subscriptions)).sorted()
        self.visits = visits
        self.decidedAtOrMin = decidedAt ?? .min
    }

    /// Adds `tags` to the subscriptions.
    public mutating func subscribe(to tags: [String]) {
        subscriptions = Array(Set(subscriptions + tags)).sorted()
    }

    /// Removes `tags` from the subscriptions.
    ///
    /// The visits of geofences no tag reaches any more end at the next fix, announcing nothing (as `untrack` does).
    public mutating func unsubscribe(from tags: [String]) {
        let removed = Set(tags)
        subscriptions.removeAll { removed.contains($0) }
    }
}

/// The catalog geofences around a device, kept beside its state (in ``DeviceAreas``, not persisted): the versions in
/// force whose boxes meet an area around where it was last looked up, so that the fixes that follow inside it read
/// those few, one after the other, instead of the catalog's grid and its scattered versions, which are most of a
/// catalog fix's cost.
///
/// Made again when a fix's lookup leaves the area, its time leaves the stretch in which the same versions are in force
/// there, or the catalog changed since (``GeofenceCatalog/generation``). A reference, changed in place by the device's
/// apply thread alone: a device without the catalog pays a nil.
public final class CatalogArea: @unchecked Sendable {
    // @unchecked: a device's area is read and changed only by the apply thread that holds the device.
    /// How far around a lookup the area reaches: a device driving at 15 m/s with a fix every 10 s looks the grid up
    /// about every 30 fixes, and keeps a few dozen versions in a catalog of 20 geofences a square kilometre.
    static let reach = 500.0

    private(set) var box: (west: Double, south: Double, east: Double, north: Double)
    private(set) var generation: UInt64
    /// The versions in force throughout `from..<until` whose boxes meet `box`.
    private(set) var entries: [GeofenceCatalog.AreaEntry]
    private let from: Int64
    private let until: Int64

    init(
        around box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        in catalog: GeofenceCatalog
    ) {
        let widened = CatalogTracking.widen(box, by: Self.reach)
        self.box = widened
        generation = catalog.generation
        (entries, from, until) = catalog.area(meeting: widened, at: time)
    }

    /// Whether the area still answers for a lookup of `query` at message time `time` in `catalog`.
    func holds(
        _ query: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        in catalog: GeofenceCatalog
    ) -> Bool {
        generation == catalog.generation && from <= time && time < until && box.west <= query.west
            && query.east <= box.east && box.south <= query.south && query.north <= box.north
    }
}
