/// The tracker's activity rules: trips and speeding at a usable fix (``TripTracker``, ``SpeedWatch``), silence at every
/// fix and by the stream's time (``SilenceWatch``).
extension DeviceTracker {
    /// Trips and speeding at a usable fix (decided before the geofences, so that their events come in that order).
    func applyActivity(
        _ context: GeofenceEvaluator.FixContext,
        previous: Fix?,
        watchesSpeed: Bool,
        to state: inout DeviceState,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        state.withActivity { activity in
            applyActivity(
                context,
                previous: previous,
                watchesSpeed: watchesSpeed,
                to: &activity,
                numbering: &numbering,
                events: &events
            )
        }
    }

    private func applyActivity(
        _ context: GeofenceEvaluator.FixContext,
        previous: Fix?,
        watchesSpeed: Bool,
        to activity: inout DeviceActivity,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        if let rules = configuration.trips {
            TripTracker(rules: rules, assumedAccuracy: configuration.assumedAccuracyMeters).apply(
                context.fix,
                margin: context.margin,
                speed: context.motion.speed.flatMap {
                    context.motion.speedBasis == .derivedSpeed
                        && $0 > configuration.speeding.maximumPlausibleMetersPerSecond ? nil : $0
                },
                previous: previous,
                to: &activity,
                numbering: &numbering,
                events: &events
            )
        } else {
            activity.anchor = nil
            activity.trip = nil
        }
        if watchesSpeed {
            speedWatch.apply(context.fix, motion: context.motion, to: &activity, numbering: &numbering, events: &events)
        } else {
            activity.speeding = nil
        }
    }

    /// Drops the progress of trips and speeding when neither is on for the device (its own limits stay).
    func forgetActivity(of state: inout DeviceState) {
        state.activity.anchor = nil
        state.activity.trip = nil
        state.activity.speeding = nil
    }

    var speedWatch: SpeedWatch { SpeedWatch(rules: configuration.speeding) }

    var silenceWatch: SilenceWatch { SilenceWatch(rules: configuration.liveness) }

    /// When the device is silent unless a fix of it comes first (milliseconds since the epoch); nil when it is not
    /// watched, has no fix, or is announced silent already.
    public func silenceDeadline(of state: DeviceState) -> Int64? { silenceWatch.deadline(of: state) }

    /// The device's `device.silent` when its deadline is at or before `streamTime` (the newest message time its
    /// partition has applied) and it is not announced yet; the state marks it announced.
    public func silence(of state: inout DeviceState, at streamTime: Int64) -> DeviceEvent? {
        silenceWatch.silence(of: &state, at: streamTime)
    }
}
