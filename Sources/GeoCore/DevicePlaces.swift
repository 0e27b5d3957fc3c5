/// The region and time zone last announced for a device, with the changes seen but not yet confirmed: the places
/// part of its ``DeviceState``, kept by the ``PlaceTracker``.
public struct DevicePlaces: Hashable, Sendable {
    /// The region last announced (nil before the first, or in a country where no region is known).
    public var region: PlaceRegion?
    /// A different region (its ISO 3166-2 code) that recent fixes placed the device in, not yet confirmed.
    public var regionCandidate: String?
    public var regionCandidateFixes: Int
    /// The IANA time zone last announced, nil before the first.
    public var timeZone: String?
    /// A different time zone that recent fixes placed the device in, not yet confirmed.
    public var timeZoneCandidate: String?
    public var timeZoneCandidateFixes: Int

    public init(
        region: PlaceRegion? = nil,
        regionCandidate: String? = nil,
        regionCandidateFixes: Int = 0,
        timeZone: String? = nil,
        timeZoneCandidate: String? = nil,
        timeZoneCandidateFixes: Int = 0
    ) {
        self.region = region
        self.regionCandidate = regionCandidate
        self.regionCandidateFixes = regionCandidateFixes
        self.timeZone = timeZone
        self.timeZoneCandidate = timeZoneCandidate
        self.timeZoneCandidateFixes = timeZoneCandidateFixes
    }

    /// Nothing announced, nothing pending: what a state written before places existed holds.
    public var isEmpty: Bool { self == DevicePlaces() }
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
