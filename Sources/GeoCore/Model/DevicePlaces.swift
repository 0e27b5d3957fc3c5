/// The region and time zone last announced for a device, with the changes seen but not yet confirmed: the places
/// part of its ``DeviceState``, kept by the ``PlaceTracker``.
///
/// Held in one shared box, copied when written (a device's places change at a border, not at every fix): a device
/// state is copied and retained as one value, and five strings of places inside it doubled the state's size and
/// the tracker's cost per fix when places were off.
public struct DevicePlaces: Hashable, Sendable {
    /// The places' values, one copy per box.
    private struct Fields: Hashable, Sendable {
        var region: PlaceRegion?
        var regionCandidate: String?
        var regionCandidateFixes = 0
        var timeZone: String?
        var timeZoneCandidate: String?
        var timeZoneCandidateFixes = 0
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
        static let empty = Box(Fields())
    }

    private var box: Box

    public init(
        region: PlaceRegion? = nil,
        regionCandidate: String? = nil,
        regionCandidateFixes: Int = 0,
        timeZone: String? = nil,
        timeZoneCandidate: String? = nil,
        timeZoneCandidateFixes: Int = 0
    ) {
        let fields = Fields(
            region: region,
            regionCandidate: regionCandidate,
            regionCandidateFixes: regionCandidateFixes,
            timeZone: timeZone,
            timeZoneCandidate: timeZoneCandidate,
            timeZoneCandidateFixes: timeZoneCandidateFixes
        )
        box = fields == Fields() ? Box.empty : Box(fields)
    }

    /// The region last announced (nil before the first, or in a country where no region is known).
    public var region: PlaceRegion? {
        get { box.fields.region }
        set { update(box.fields.region, to: newValue) { $0.region = newValue } }
    }
    /// A different region (its ISO 3166-2 code) that recent fixes placed the device in, not yet confirmed.
    public var regionCandidate: String? {
        get { box.fields.regionCandidate }
        set { update(box.fields.regionCandidate, to: newValue) { $0.regionCandidate = newValue } }
    }
    public var regionCandidateFixes: Int {
        get { box.fields.regionCandidateFixes }
        set { update(box.fields.regionCandidateFixes, to: newValue) { $0.regionCandidateFixes = newValue } }
    }
    /// The IANA time zone last announced, nil before the first.
    public var timeZone: String? {
        get { box.fields.timeZone }
        set { update(box.fields.timeZone, to: newValue) { $0.timeZone = newValue } }
    }
    /// A different time zone that recent fixes placed the device in, not yet confirmed.
    public var timeZoneCandidate: String? {
        get { box.fields.timeZoneCandidate }
        set { update(box.fields.timeZoneCandidate, to: newValue) { $0.timeZoneCandidate = newValue } }
    }
    public var timeZoneCandidateFixes: Int {
        get { box.fields.timeZoneCandidateFixes }
        set { update(box.fields.timeZoneCandidateFixes, to: newValue) { $0.timeZoneCandidateFixes = newValue } }
    }

    /// A new box with one value changed by `write`, made only when the value does change.
    ///
    /// A value changes at a border, not at every fix, but the tracker writes at every fix: through a closure, which
    /// is inlined, rather than a key path, which goes through the runtime (instantiation, retains, a projection).
    private mutating func update<Value: Equatable>(_ current: Value, to value: Value, _ write: (inout Fields) -> Void) {
        guard current != value else { return }
        var fields = box.fields
        write(&fields)
        box = Box(fields)
    }

    public static func == (left: DevicePlaces, right: DevicePlaces) -> Bool {
        left.box === right.box || left.box.fields == right.box.fields
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.fields) }
}

/// The rule shared by a device's country, region and time zone: a change is announced once `needed` deciding fixes
/// in a row placed the device in it.
enum ChangeConfirmation {
    /// Counts a deciding fix that placed the device in `code` (not the announced one); true when that confirms it,
    /// the pending change then cleared.
    static func confirms(_ code: String, candidate: inout String?, fixes: inout Int, needed: Int) -> Bool {
        if candidate == code {
            fixes += 1
        } else {
            candidate = code
            fixes = 1
        }
        guard fixes >= needed else { return false }
        candidate = nil
        fixes = 0
        return true
    }
}
