/// The region and time zone last announced for a device, with the changes seen but not yet confirmed: the places
/// part of its ``DeviceState``, kept by the ``PlaceTracker``.
///
/// Held in one shared box, copied when written (a device's places change at a border, not at every fix): a device
/// state is copied and retained as one value, and five strings of places inside it doubled the state's size and
/// the tracker's cost per fix when places were off.
public struct DevicePlaces: Hashable, Sendable {
    private final class Box: Sendable {
        let region: PlaceRegion?
        let regionCandidate: String?
        let regionCandidateFixes: Int
        let timeZone: String?
        let timeZoneCandidate: String?
        let timeZoneCandidateFixes: Int

        init(
            region: PlaceRegion?,
            regionCandidate: String?,
            regionCandidateFixes: Int,
            timeZone: String?,
            timeZoneCandidate: String?,
            timeZoneCandidateFixes: Int
        ) {
            self.region = region
            self.regionCandidate = regionCandidate
            self.regionCandidateFixes = regionCandidateFixes
            self.timeZone = timeZone
            self.timeZoneCandidate = timeZoneCandidate
            self.timeZoneCandidateFixes = timeZoneCandidateFixes
        }

        static let empty = Box(
            region: nil,
            regionCandidate: nil,
            regionCandidateFixes: 0,
            timeZone: nil,
            timeZoneCandidate: nil,
            timeZoneCandidateFixes: 0
        )
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
        let empty =
            region == nil && regionCandidate == nil && regionCandidateFixes == 0 && timeZone == nil
            && timeZoneCandidate == nil && timeZoneCandidateFixes == 0
        box =
            empty
            ? Box.empty
            : Box(
                region: region,
                regionCandidate: regionCandidate,
                regionCandidateFixes: regionCandidateFixes,
                timeZone: timeZone,
                timeZoneCandidate: timeZoneCandidate,
                timeZoneCandidateFixes: timeZoneCandidateFixes
            )
    }

    /// The region last announced (nil before the first, or in a country where no region is known).
    public var region: PlaceRegion? {
        get { box.region }
        set { if newValue != box.region { update { $0.region = newValue } } }
    }
    /// A different region (its ISO 3166-2 code) that recent fixes placed the device in, not yet confirmed.
    public var regionCandidate: String? {
        get { box.regionCandidate }
        set { if newValue != box.regionCandidate { update { $0.regionCandidate = newValue } } }
    }
    public var regionCandidateFixes: Int {
        get { box.regionCandidateFixes }
        set { if newValue != box.regionCandidateFixes { update { $0.regionCandidateFixes = newValue } } }
    }
    /// The IANA time zone last announced, nil before the first.
    public var timeZone: String? {
        get { box.timeZone }
        set { if newValue != box.timeZone { update { $0.timeZone = newValue } } }
    }
    /// A different time zone that recent fixes placed the device in, not yet confirmed.
    public var timeZoneCandidate: String? {
        get { box.timeZoneCandidate }
        set { if newValue != box.timeZoneCandidate { update { $0.timeZoneCandidate = newValue } } }
    }
    public var timeZoneCandidateFixes: Int {
        get { box.timeZoneCandidateFixes }
        set { if newValue != box.timeZoneCandidateFixes { update { $0.timeZoneCandidateFixes = newValue } } }
    }

    /// Nothing announced, nothing pending: what a state written before places existed holds.
    public var isEmpty: Bool { self == DevicePlaces() }

    /// A new box with one field changed (only written when a value changes: at a border, not at every fix).
    private mutating func update(_ change: (inout DevicePlaces.Fields) -> Void) {
        var fields = Fields(box)
        change(&fields)
        self = DevicePlaces(
            region: fields.region,
            regionCandidate: fields.regionCandidate,
            regionCandidateFixes: fields.regionCandidateFixes,
            timeZone: fields.timeZone,
            timeZoneCandidate: fields.timeZoneCandidate,
            timeZoneCandidateFixes: fields.timeZoneCandidateFixes
        )
    }

    private struct Fields {
        var region: PlaceRegion?
        var regionCandidate: String?
        var regionCandidateFixes: Int
        var timeZone: String?
        var timeZoneCandidate: String?
        var timeZoneCandidateFixes: Int

        init(_ box: Box) {
            region = box.region
            regionCandidate = box.regionCandidate
            regionCandidateFixes = box.regionCandidateFixes
            timeZone = box.timeZone
            timeZoneCandidate = box.timeZoneCandidate
            timeZoneCandidateFixes = box.timeZoneCandidateFixes
        }
    }

    public static func == (left: DevicePlaces, right: DevicePlaces) -> Bool {
        left.box === right.box
            || (left.region == right.region && left.regionCandidate == right.regionCandidate
                && left.regionCandidateFixes == right.regionCandidateFixes && left.timeZone == right.timeZone
                && left.timeZoneCandidate == right.timeZoneCandidate
                && left.timeZoneCandidateFixes == right.timeZoneCandidateFixes)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(region)
        hasher.combine(regionCandidate)
        hasher.combine(regionCandidateFixes)
        hasher.combine(timeZone)
        hasher.combine(timeZoneCandidate)
        hasher.combine(timeZoneCandidateFixes)
    }
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
