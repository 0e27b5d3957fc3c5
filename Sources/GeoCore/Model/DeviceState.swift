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
    ///
    /// Kept out of line, in an array of none or one: most devices have none, and the couple of hundred bytes it takes
    /// inline would be copied with every state.
    public var activity: DeviceActivity {
        get { activityStorage.first ?? DeviceActivity() }
        set {
            if newValue.isEmpty {
                activityStorage = []
            } else if activityStorage.isEmpty {
                activityStorage = [newValue]
            } else {
                activityStorage[0] = newValue
            }
        }
    }
    /// Whether the device has any activity state (``activity`` is not empty), without copying it.
    public var hasActivity: Bool { !activityStorage.isEmpty }

    /// Reads a part of the activity in place (`absent` when the device has none), where ``activity``'s getter copies
    /// all of it: the rules ask a field or two of it at every fix.
    @inline(__always)
    func readActivity<Value>(absent: Value, _ read: (borrowing DeviceActivity) -> Value) -> Value {
        activityStorage.withUnsafeBufferPointer { $0.isEmpty ? absent : read($0[0]) }
    }

    /// Changes the activity in place, where ``activity``'s setter would copy it out and back.
    mutating func withActivity<Result>(_ body: (inout DeviceActivity) -> Result) -> Result {
        if activityStorage.isEmpty { activityStorage.append(DeviceActivity()) }
        let result = body(&activityStorage[0])
        if activityStorage[0].isEmpty { activityStorage.removeAll() }
        return result
    }
    private var activityStorage: [DeviceActivity] = []
    /// When its last position was heard by the stream's clock, if later than the fix's own time.
    ///
    /// Its pair's stream time then, the message's own time included (milliseconds since the epoch). Kept only while its
    /// silence is watched; nil when heard on time, or without a stream (``SilenceWatch``). A fix that comes late (a device that buffered its fixes, or input produced out of order) is silent only once the
    /// stream moves on by the threshold from when it came, not from its own time, which the stream passed already.
    public var lastHeard: Int64?
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
        lastHeard: Int64? = nil,
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
        self.inputPartition = inputPartition
        self.appliedOffsets = appliedOffsets
        self.activity = activity
        self.lastHeard = lastHeard
    }
}
