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

/// The catalog geofences around a device, kept beside its state (in ``DeviceAreas``, not persisted): the versions in
/// force whose boxes meet an area around where it was last looked up, so that the fixes that follow inside it read
/// those few, one after the other, instead of the catalog's grid and its scattered versions, which are most of a
/// catalog fix's cost.
///
/// Only the versions the device's tags reach, in the order of their ids (the order the rules decide them in), so that
/// a fix reads neither a version's tags nor its id to choose and order its candidates. Made again when a fix's lookup
/// leaves the area, its time leaves the stretch in which the same versions are in force there, the device's
/// subscriptions changed, or the catalog changed since (``GeofenceCatalog/generation``). A reference, changed in place
/// by the device's apply thread alone: a device without the catalog pays a nil.
public final class CatalogArea: @unchecked Sendable {
    // @unchecked: a device's area is read and changed only by the apply thread that holds the device.
    /// How far around a lookup the area reaches: a device driving at 15 m/s with a fix every 10 s looks the grid up
    /// about every 30 fixes, and keeps a few dozen versions in a catalog of 20 geofences a square kilometre.
    static let reach = 500.0

    private(set) var box: (west: Double, south: Double, east: Double, north: Double)
    private(set) var generation: UInt64
    /// The device's subscriptions the area was made for.
    private let subscriptions: [String]
    /// The versions in force throughout `from..<until` whose boxes meet `box` and that the device's tags reach, in the
    /// order of their geofences' ids.
    private(set) var entries: [GeofenceCatalog.AreaEntry]
    private let from: Int64
    private let until: Int64

    /// - Parameters:
    ///   - box: the lookup the area is made for (it reaches ``reach`` metres further).
    ///   - time: the lookup's message time.
    ///   - catalog: the catalog.
    ///   - subscriptions: the device's subscriptions.
    ///   - reaches: whether the device's tags (its `subscriptions` and the tags every device has) reach a version.
    init(
        around box: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        in catalog: GeofenceCatalog,
        for subscriptions: [String],
        reaching reaches: (_ number: Int32) -> Bool
    ) {
        let widened = CatalogTracking.widen(box, by: Self.reach)
        self.box = widened
        generation = catalog.generation
        self.subscriptions = subscriptions
        (entries, from, until) = catalog.area(meeting: widened, at: time, reaching: reaches)
    }

    /// Whether the area still answers for a lookup of `query` at message time `time` in `catalog` by a device with
    /// `subscriptions`.
    func holds(
        _ query: (west: Double, south: Double, east: Double, north: Double),
        at time: Int64,
        for subscriptions: [String],
        in catalog: GeofenceCatalog
    ) -> Bool {
        generation == catalog.generation && from <= time && time < until && box.west <= query.west
            && query.east <= box.east && box.south <= query.south && query.north <= box.north
            && subscriptions == self.subscriptions
    }
}
