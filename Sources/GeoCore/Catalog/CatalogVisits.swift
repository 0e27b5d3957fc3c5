/// A device's standing with the fleet's catalog: the tags it subscribes to, and a visit for each catalog geofence it is
/// not simply outside of (inside, undecided near an edge, or approaching), never a copy of the geofence.
public struct CatalogVisits: Hashable, Sendable {
    /// The tags the device subscribed to, sorted, each once.
    public private(set) var subscriptions: [String]
    /// By catalog geofence id.
    public internal(set) var visits: [String: GeofenceStanding]
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

    public init(subscriptions: [String] = [], visits: [String: GeofenceStanding] = [:], decidedAt: Int64? = nil) {
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
