/// Where a device stands with one geofence and what has been announced about it: what the geofence rules
/// (``GeofenceEvaluator``) keep between fixes, apart from the geofence itself.
///
/// A tracked pin keeps it beside its own pin (``TrackedPin``); a device keeps one for each catalog geofence it is not
/// simply outside of (``CatalogVisits``), whose shape the catalog holds once for every device.
public struct GeofenceStanding: Hashable, Sendable {
    public var membership: Membership
    /// Whether this visit's `geofence.dwelled` has been announced (cleared when the device leaves).
    public var dwellAnnounced: Bool
    /// Whether the current approach has been announced (cleared when the device leaves the geofence or moves away
    /// from it).
    public var approachAnnounced: Bool
    // The two optional times as plain integers with `Int64.min` for none: an `Int64?` takes 16 bytes where
    // an `Int64` takes 8, and a worker holds millions of them.
    private var sinceOrMin: Int64
    private var approachArrivalOrMin: Int64

    /// The time (message time, epoch milliseconds) of the fix that decided `membership`; nil while undetermined.
    ///
    /// The start of a visit, which the dwell is measured from.
    public var since: Int64? {
        get { sinceOrMin == .min ? nil : sinceOrMin }
        set { sinceOrMin = newValue ?? .min }
    }

    /// While an announced approach is under way (the device not inside yet): when it is expected at the geofence's
    /// edge (message time, epoch milliseconds), from the latest fix's distance, speed and direction.
    ///
    /// What the status card's ETA is measured from.
    public var approachArrival: Int64? {
        get { approachArrivalOrMin == .min ? nil : approachArrivalOrMin }
        set { approachArrivalOrMin = newValue ?? .min }
    }

    public init(
        membership: Membership = .undetermined,
        since: Int64? = nil,
        dwellAnnounced: Bool = false,
        approachAnnounced: Bool = false,
        approachArrival: Int64? = nil
    ) {
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

    /// Whether there is nothing to keep: outside, no approach under way.
    ///
    /// Every catalog geofence a device has not met stands so, at no cost.
    var isOutsideOnly: Bool { membership == .outside && !approachAnnounced }
}
