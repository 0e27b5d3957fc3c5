/// When a device's movement makes a trip (``TripTracker``): Traccar's defaults are the reference (a trip is 500 m or
/// 5 minutes of movement, and ends after 5 minutes parked).
public struct TripRules: Hashable, Sendable {
    /// A movement is announced as a trip once the device has covered this much since it set off (metres)...
    ///
    /// Default: 500 m.
    public var minimumDistanceMeters: Double
    /// ...or has been on its way this long (seconds).
    ///
    /// Default: 300 (5 minutes).
    public var minimumDurationSeconds: Int
    /// A trip ends once the device has stood still this long (seconds), so that a red light or a queue is no end.
    ///
    /// Default: 300 (5 minutes).
    public var minimumParkingSeconds: Int
    /// A trip also ends at a gap between two fixes longer than this (seconds).
    ///
    /// Where the device went meanwhile is not known: the trip ends at its last movement before the gap.
    ///
    /// Default: 3,600 (an hour).
    public var maximumGapSeconds: Int

    public init(
        minimumDistanceMeters: Double = 500,
        minimumDurationSeconds: Int = 300,
        minimumParkingSeconds: Int = 300,
        maximumGapSeconds: Int = 3_600
    ) {
        self.minimumDistanceMeters = minimumDistanceMeters
        self.minimumDurationSeconds = minimumDurationSeconds
        self.minimumParkingSeconds = minimumParkingSeconds
        self.maximumGapSeconds = maximumGapSeconds
    }
}

/// When a device's speed is announced as over its limit (``SpeedWatch``).
public struct SpeedRules: Hashable, Sendable {
    /// The limit of devices without one of their own (a `setLimits` command), in metres per second; nil: only devices
    /// with their own limit are watched.
    ///
    /// Default: none.
    public var limitMetersPerSecond: Double?
    /// How long the speed must stay above the limit before it is announced (seconds), so that one fix over it is
    /// not an episode.
    ///
    /// Default: 30.
    public var minimumDurationSeconds: Int
    /// A speed derived from two fixes above this (metres per second) is a jump of the GPS, not a speed: it decides
    /// nothing.
    ///
    /// Default: 100 m/s (360 km/h).
    public var maximumPlausibleMetersPerSecond: Double

    public init(
        limitMetersPerSecond: Double? = nil,
        minimumDurationSeconds: Int = 30,
        maximumPlausibleMetersPerSecond: Double = 100
    ) {
        self.limitMetersPerSecond = limitMetersPerSecond
        self.minimumDurationSeconds = minimumDurationSeconds
        self.maximumPlausibleMetersPerSecond = maximumPlausibleMetersPerSecond
    }
}

/// When a device that sends nothing is announced silent (``SilenceWatch``).
public struct LivenessRules: Hashable, Sendable {
    /// How long a device may send no fix before it is silent (seconds), for devices without a threshold of their own
    /// (a `setLimits` command); nil: only devices with their own are watched.
    ///
    /// Default: none.
    public var silentAfterSeconds: Int?

    public init(silentAfterSeconds: Int? = nil) {
        self.silentAfterSeconds = silentAfterSeconds
    }
}
