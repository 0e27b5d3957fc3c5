/// Rules of the ``DeviceTracker`` that an operator may tune.
public struct TrackerConfiguration: Hashable, Sendable {
    /// The most pins one device may track; a `track` beyond it is refused.
    ///
    /// Default: 100.
    public var maxPinsPerDevice: Int
    /// Fixes reporting a worse accuracy (in metres) are not used for geofence decisions at all; they still count as the
    /// device's latest position and for its country.
    ///
    /// Default: 500 m.
    public var maxAccuracyMeters: Double
    /// The hysteresis margin, in metres, for fixes that report no accuracy.
    ///
    /// Default: 10 m.
    public var assumedAccuracyMeters: Double
    /// How many deciding fixes in a row (each with its whole accuracy disc in the other country) must place a device in
    /// another country before it is announced there.
    ///
    /// The accuracy rule alone keeps a device along a border from flapping, so one is enough; more delay every
    /// crossing. The first country is announced at the first fix. Default: 1.
    public var countryConfirmations: Int
    /// The most vertices one polygon pin may have (closing positions not counted); a `track` of a larger shape is
    /// refused.
    ///
    /// Each fix near a polygon costs time in proportion. Default: 1,000.
    public var maxVerticesPerPin: Int
    /// The most polygon vertices all the pins of one device may have together.
    ///
    /// Default: 10,000.
    public var maxVerticesPerDevice: Int
    /// Two fixes further apart in time than this (seconds) say nothing about the path between them: no
    /// `geofence.crossed` is inferred and no speed derived from them.
    ///
    /// Default: 600 (10 minutes).
    public var maxFixGapSeconds: Int
    /// How far (degrees) a device's heading may point from the direction of a pin for it to count as heading towards it
    /// (`geofence.approaching`).
    ///
    /// Heading more than 90 degrees away counts as moving away, which re-arms the announcement. Default: 45.
    public var approachHeadingToleranceDegrees: Double
    /// Below this speed (metres per second) a device is approaching nothing.
    ///
    /// Default: 1 m/s.
    public var approachMinimumSpeed: Double
    /// How many deciding fixes in a row must place a device in another region or time zone before it is announced
    /// there (as ``countryConfirmations`` for countries).
    ///
    /// Default: 1.
    public var placeConfirmations: Int
    /// Event types (``DeviceEvent/types``, such as `region.changed`) the tracker does not emit.
    ///
    /// The device's state follows them all the same, so that turning one back on announces the next change rather
    /// than an old one. Default: none.
    public var disabledEventTypes: Set<String>
    /// The catalog tags every device subscribes to without a `subscribe` command, so that a fleet whose devices all
    /// watch the same geofences needs no command per device.
    ///
    /// Default: none.
    public var catalogTags: [String]
    /// The most catalog geofences one device keeps a visit of (inside, undecided near an edge, or approaching); a
    /// geofence met beyond them is not decided for the device, and counted.
    ///
    /// Default: 100.
    public var maxCatalogVisits: Int
    /// When movements are announced as trips; nil: no trips.
    ///
    /// Default: none.
    public var trips: TripRules?
    /// Speed limits and how they are watched.
    ///
    /// Default: no limit but the devices' own.
    public var speeding: SpeedRules
    /// When devices that send nothing are announced silent.
    ///
    /// Default: only those with a threshold of their own.
    public var liveness: LivenessRules

    public init(
        maxPinsPerDevice: Int = 100,
        maxAccuracyMeters: Double = 500,
        assumedAccuracyMeters: Double = 10,
        countryConfirmations: Int = 1,
        maxVerticesPerPin: Int = 1_000,
        maxVerticesPerDevice: Int = 10_000,
        maxFixGapSeconds: Int = 600,
        approachHeadingToleranceDegrees: Double = 45,
        approachMinimumSpeed: Double = 1,
        placeConfirmations: Int = 1,
        disabledEventTypes: Set<String> = [],
        catalogTags: [String] = [],
        maxCatalogVisits: Int = 100,
        trips: TripRules? = nil,
        speeding: SpeedRules = SpeedRules(),
        liveness: LivenessRules = LivenessRules()
    ) {
        self.maxPinsPerDevice = maxPinsPerDevice
        self.maxAccuracyMeters = maxAccuracyMeters
        self.assumedAccuracyMeters = assumedAccuracyMeters
        self.countryConfirmations = countryConfirmations
        self.maxVerticesPerPin = maxVerticesPerPin
        self.maxVerticesPerDevice = maxVerticesPerDevice
        self.maxFixGapSeconds = maxFixGapSeconds
        self.approachHeadingToleranceDegrees = approachHeadingToleranceDegrees
        self.approachMinimumSpeed = approachMinimumSpeed
        self.placeConfirmations = placeConfirmations
        self.disabledEventTypes = disabledEventTypes
        self.catalogTags = Array(Set(catalogTags)).sorted()
        self.maxCatalogVisits = maxCatalogVisits
        self.trips = trips
        self.speeding = speeding
        self.liveness = liveness
    }
}
