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
    private(set) var entries: [Entry]
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

    /// Calls `visit` with the number of each version of the area whose box meets `box`, with the time it came in
    /// force, in the order of their geofences' ids.
    func forEachVersion(
        meeting box: (west: Double, south: Double, east: Double, north: Double),
        _ visit: (_ number: Int32, _ since: Int64) -> Void
    ) {
        let (main, wrapped) = CatalogGrid.Box.sides(of: box)
        for entry in entries where entry.meets(main) || wrapped.map(entry.meets) == true {
            visit(entry.number, entry.from)
        }
    }

    /// A version near the device.
    ///
    /// Its number, its box in single precision rounded outwards (the box only chooses which geofences the rules look
    /// at), and when it came in force. Read one after the other: a fix looks through its area's dozens of versions
    /// without touching the catalog's million, and reads a version's geofence only when its box meets the fix's.
    struct Entry {
        let west: Float
        let south: Float
        let east: Float
        let north: Float
        let number: Int32
        let from: Int64

        init(_ box: CatalogGrid.Box, number: Int32, from: Int64) {
            west = Float(box.west).nextDown
            south = Float(box.south).nextDown
            east = Float(box.east).nextUp
            north = Float(box.north).nextUp
            self.number = number
            self.from = from
        }

        func meets(_ box: CatalogGrid.Box) -> Bool {
            Double(west) <= box.east && box.west <= Double(east) && Double(south) <= box.north
                && box.south <= Double(north)
        }
    }
}
