/// How a device is moving, as far as trips and its speed go, and the limits it has of its own.
public struct DeviceActivity: Hashable, Sendable {
    /// Where the device was last seen to stand or arrive.
    ///
    /// A fix further from it than both fixes' accuracies is movement, anything nearer is the jitter of a device
    /// standing still. Nil until the first fix with trips on.
    public var anchor: Fix?
    /// The movement under way (a trip, or not yet one); nil while the device stands.
    public var trip: TripProgress?
    /// The speed above the limit under way; nil while at or under it.
    public var speeding: SpeedEpisode?
    /// The device's own speed limit (metres per second), set by a `setLimits` command; nil: the default.
    public var speedLimit: Double?
    /// The device's own silence threshold (seconds), set by a `setLimits` command; nil: the default.
    public var silentAfterSeconds: Int?
    /// Whether `device.silent` was sent for the device's last fix (by the stream's time passing its deadline).
    public var silenceAnnounced: Bool

    public init(
        anchor: Fix? = nil,
        trip: TripProgress? = nil,
        speeding: SpeedEpisode? = nil,
        speedLimit: Double? = nil,
        silentAfterSeconds: Int? = nil,
        silenceAnnounced: Bool = false
    ) {
        self.anchor = anchor
        self.trip = trip
        self.speeding = speeding
        self.speedLimit = speedLimit
        self.silentAfterSeconds = silentAfterSeconds
        self.silenceAnnounced = silenceAnnounced
    }

    /// Whether there is nothing to keep: a device in this state is written without it.
    public var isEmpty: Bool {
        anchor == nil && trip == nil && speeding == nil && speedLimit == nil && silentAfterSeconds == nil
            && !silenceAnnounced
    }
}

/// A device on its way: since it set off, how far it went, and whether it is announced as a trip yet.
public struct TripProgress: Hashable, Sendable {
    /// The last fix at the place it left: where and when the trip began.
    public var start: Fix
    /// The newest fix that moved on from the one before: where it stops if it stands from here.
    public var lastMove: Fix
    /// The path through its moving fixes, in metres.
    public var distanceMeters: Double
    /// The highest speed of its fixes (reported, else derived), in metres per second.
    public var topSpeed: Double
    /// Whether `trip.started` was sent.
    public var announced: Bool

    public init(start: Fix, lastMove: Fix, distanceMeters: Double, topSpeed: Double, announced: Bool) {
        self.start = start
        self.lastMove = lastMove
        self.distanceMeters = distanceMeters
        self.topSpeed = topSpeed
        self.announced = announced
    }
}

/// A device above its speed limit since a fix.
public struct SpeedEpisode: Hashable, Sendable {
    /// The time of the first fix above the limit.
    public var since: Int64
    /// The highest speed since, in metres per second.
    public var topSpeed: Double
    /// Whether `speed.exceeded` was sent.
    public var announced: Bool
    /// The direction of the last fix's derived speed (degrees from north); nil when its speed was reported.
    ///
    /// A derived one that turns back from it is the GPS returning from a jump.
    public var heading: Double?

    public init(since: Int64, topSpeed: Double, announced: Bool, heading: Double? = nil) {
        self.since = since
        self.topSpeed = topSpeed
        self.announced = announced
        self.heading = heading
    }
}
