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
        self.inputPartition = inputPartition
        self.appliedOffsets = appliedOffsets
    }
}

/// The offset of the last message applied to a device from each input topic, in its input partition;
/// -1 where none has been.
public struct AppliedOffsets: Hashable, Sendable {
    public var positions: Int64
    public var commands: Int64

    public init(positions: Int64 = -1, commands: Int64 = -1) {
        self.positions = positions
        self.commands = commands
    }

    public subscript(kind: InputKind) -> Int64 {
        get {
            switch kind {
            case .positions: positions
            case .commands: commands
            }
        }
        set {
            switch kind {
            case .positions: positions = newValue
            case .commands: commands = newValue
            }
        }
    }
}

/// A pin and what has been announced about the device relative to it.
public struct TrackedPin: Hashable, Sendable {
    public var pin: Pin
    public var membership: Membership
    /// Whether this visit's `geofence.dwelled` has been announced (cleared when the device leaves).
    public var dwellAnnounced: Bool
    /// Whether the current approach has been announced (cleared when the device leaves the pin or moves away
    /// from it).
    public var approachAnnounced: Bool
    // The two optional times as plain integers with `Int64.min` for none: an `Int64?` takes 16 bytes where
    // an `Int64` takes 8, and a worker holds millions of tracked pins.
    private var sinceOrMin: Int64
    private var approachArrivalOrMin: Int64

    /// The time (message time, epoch milliseconds) of the fix that decided `membership`; nil while undetermined.
    ///
    /// The start of a visit, which the dwell is measured from.
    public var since: Int64? {
        get { sinceOrMin == .min ? nil : sinceOrMin }
        set { sinceOrMin = newValue ?? .min }
    }

    /// While an announced approach is under way (the device not inside yet): when it is expected at the pin's edge
    /// (message time, epoch milliseconds), from the latest fix's distance, speed and direction.
    ///
    /// What the status card's ETA is measured from.
    public var approachArrival: Int64? {
        get { approachArrivalOrMin == .min ? nil : approachArrivalOrMin }
        set { approachArrivalOrMin = newValue ?? .min }
    }

    public init(
        pin: Pin,
        membership: Membership = .undetermined,
        since: Int64? = nil,
        dwellAnnounced: Bool = false,
        approachAnnounced: Bool = false,
        approachArrival: Int64? = nil
    ) {
        self.pin = pin
        self.membership = membership
        self.sinceOrMin = since ?? .min
        self.dwellAnnounced = dwellAnnounced
        self.approachAnnounced = approachAnnounced
        self.approachArrivalOrMin = approachArrival ?? .min
    }

    /// Ends the approach: a new one may be announced.
    mutating func rearmApproach() {
        approachAnnounced = false
        approachArrival = nil
    }
}

/// Where a device was last announced to be relative to a pin.
///
/// Persisted, so a restart never announces the same state twice.
public enum Membership: UInt8, Hashable, Sendable {
    /// No fix has decided it yet (none since the pin was tracked, or none accurate enough).
    case undetermined = 0
    case inside = 1
    case outside = 2
}

/// A position as far as state and events need it.
public struct Fix: Hashable, Sendable {
    public let coordinate: Coordinate
    /// Milliseconds since the Unix epoch.
    public let timestamp: Int64
    /// Metres, when reported.
    public let accuracy: Double?

    public init(coordinate: Coordinate, timestamp: Int64, accuracy: Double?) {
        self.coordinate = coordinate
        self.timestamp = timestamp
        self.accuracy = accuracy
    }

    public init(_ position: Position) {
        self.init(coordinate: position.coordinate, timestamp: position.timestamp, accuracy: position.accuracy)
    }
}
