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
