/// Everything geoworker remembers about one device between messages: what it persists, and all the
/// tracker needs to decide the next events.
public struct DeviceState: Hashable, Sendable {
    public let deviceId: String
    /// The pins the device tracks, in the order it tracked them.
    public var pins: [TrackedPin]
    /// The newest position applied: older and duplicate positions are judged against it, and newly
    /// tracked pins get their initial state from it.
    public var lastFix: Fix?
    /// The device user's preferred languages (BCP 47), from the newest position that reported any.
    public var languages: [String]
    /// The country last announced (ISO 3166-1 alpha-2), nil before the first fix on land.
    public var country: String?
    /// A different country that recent fixes placed the device in, not yet confirmed.
    public var countryCandidate: String?
    /// How many consecutive fixes placed the device in `countryCandidate`.
    public var countryCandidateFixes: Int
    /// With places: the region and time zone announced, and the changes pending.
    public var places: DevicePlaces
    /// The device's standing with the fleet's catalog (its subscriptions and visits); nil for a device that has never
    /// been decided against the catalog, which is every device when no catalog is used.
    public var catalog: CatalogVisits?
    /// Trips, speeding and the device's own limits (empty while none of them is on).
    public var activity: DeviceActivity
    /// The partition number its messages arrive on: that of the last message applied to it.
    ///
    /// Both input topics are co-partitioned and keyed by device id, so a device's positions and commands share this
    /// number; the state changelog keeps the device's record in its partition of the same number, next to the input it
    /// reflects, so that whoever is assigned that partition restores exactly its devices.
    public var inputPartition: Int32
    /// The offset of the last message applied to the device from each input topic's partition `inputPartition`.
    ///
    /// A message at or below it is one the state already reflects: replayed after a crash or after another instance's
    /// changelog record was restored, it is skipped, so it never counts twice.
    public var appliedOffsets: AppliedOffsets

    public init(
        deviceId: String,
        pins: [TrackedPin] = [],
        lastFix: Fix? = nil,
        languages: [String] = [],
        country: String? = nil,
        countryCandidate: String? = nil,
        countryCandidateFixes: Int = 0,
        places: DevicePlaces = DevicePlaces(),
        catalog: CatalogVisits? = nil,
        activity: DeviceActivity = DeviceActivity(),
        inputPartition: Int32 = 0,
        appliedOffsets: AppliedOffsets = AppliedOffsets()
    ) {
        self.deviceId = deviceId
        self.pins = pins
        self.lastFix = lastFix
        self.languages = languages
        self.country = country
        self.countryCandidate = countryCandidate
        self.countryCandidateFixes = countryCandidateFixes
        self.places = places
        self.catalog = catalog
        self.activity = activity
        self.inputPartition = inputPartition
        self.appliedOffsets = appliedOffsets
    }
}
