/// A pin and what has been announced about the device relative to it.
public struct TrackedPin: Hashable, Sendable {
    public var pin: Pin
    public var standing: GeofenceStanding

    public var membership: Membership {
        get { standing.membership }
        set { standing.membership = newValue }
    }
    /// Whether this visit's `geofence.dwelled` has been announced (cleared when the device leaves).
    public var dwellAnnounced: Bool {
        get { standing.dwellAnnounced }
        set { standing.dwellAnnounced = newValue }
    }
    /// Whether the current approach has been announced (cleared when the device leaves the pin or moves away
    /// from it).
    public var approachAnnounced: Bool {
        get { standing.approachAnnounced }
        set { standing.approachAnnounced = newValue }
    }
    /// The time (message time, epoch milliseconds) of the fix that decided `membership`; nil while undetermined.
    public var since: Int64? {
        get { standing.since }
        set { standing.since = newValue }
    }
    /// While an announced approach is under way: when the device is expected at the pin's edge.
    public var approachArrival: Int64? {
        get { standing.approachArrival }
        set { standing.approachArrival = newValue }
    }

    public init(
        pin: Pin,
        membership: Membership = .undetermined,
        since: Int64? = nil,
        dwellAnnounced: Bool = false,
        approachAnnounced: Bool = false,
        approachArrival: Int64? = nil
    ) {
        self.init(
            pin: pin,
            standing: GeofenceStanding(
                membership: membership,
                since: since,
                dwellAnnounced: dwellAnnounced,
                approachAnnounced: approachAnnounced,
                approachArrival: approachArrival
            )
        )
    }

    public init(pin: Pin, standing: GeofenceStanding) {
        self.pin = pin
        self.standing = standing
    }

    /// Applies the fix to the pin under `evaluator`'s rules, appending the events it causes.
    mutating func evaluate(
        _ evaluator: GeofenceEvaluator,
        _ context: GeofenceEvaluator.FixContext,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        evaluator.evaluate(pin, &standing, context, numbering: &numbering, events: &events)
    }
}
