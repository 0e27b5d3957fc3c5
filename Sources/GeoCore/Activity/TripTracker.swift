/// Trips and stops from the movement of a device's fixes: `trip.started` once a movement is long enough, by distance or
/// by time (``TripRules``), and `trip.ended` once the device has stood still for the parking time, or at a gap in its
/// fixes.
///
/// Movement is judged against an anchor, the last place the device was seen to stand or arrive at: a fix further from
/// it than the two fixes' accuracies together moves the device (and becomes the anchor), a nearer one is the jitter of
/// a device standing still, as the geofences' hysteresis has it. A device creeping forward a little at each fix moves
/// once it is beyond its accuracy from where it stood. Only fixes accurate enough to decide geofences count.
///
/// Pure: the time is the fixes' own, so that the same fixes give the same trips.
struct TripTracker {
    let rules: TripRules
    /// The accuracy of a fix that reports none, in metres.
    let assumedAccuracy: Double

    /// Applies one usable fix (accurate enough to decide geofences).
    ///
    /// - Parameters:
    ///   - fix: the fix.
    ///   - margin: its accuracy (reported, else assumed).
    ///   - speed: its speed (reported, else derived), when known.
    ///   - previous: the device's fix before this one, whatever its accuracy.
    ///   - activity: the device's activity.
    ///   - numbering: the events' ids.
    ///   - events: where the events go.
    func apply(
        _ fix: Fix,
        margin: Double,
        speed: Double?,
        previous: Fix?,
        to activity: inout DeviceActivity,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        // Where the device went during a long gap is not known: the trip ends at its last movement before it.
        if let previous, fix.timestamp - previous.timestamp > Int64(rules.maximumGapSeconds) * 1000 {
            if let trip = activity.trip, trip.announced {
                events.append(numbering.next(.tripEnded(Self.end(trip, reason: .gap, decidedAt: fix))))
            }
            activity.trip = nil
            activity.anchor = nil
        }
        guard let anchor = activity.anchor else {
            activity.anchor = fix
            return
        }
        // On the plane at the anchor: within a percent of the sphere's distance over tens of kilometres, at a
        // cosine where the haversine takes five calls of libm, at every fix of every device.
        let plane = LocalPlane(at: anchor.coordinate)
        let east = plane.x(longitude: fix.coordinate.longitude)
        let north = plane.y(latitude: fix.coordinate.latitude)
        let step = (east * east + north * north).squareRoot()
        guard step > (anchor.accuracy ?? assumedAccuracy) + margin else {
            // Standing: a movement that has stood still for the parking time is over.
            if let trip = activity.trip,
                fix.timestamp - trip.lastMove.timestamp >= Int64(rules.minimumParkingSeconds) * 1000
            {
                if trip.announced {
                    events.append(numbering.next(.tripEnded(Self.end(trip, reason: .parked, decidedAt: fix))))
                }
                activity.trip = nil
            }
            return
        }
        activity.anchor = fix
        // The trip began at the last fix at the place it left: the fix before, when it was still there.
        var trip =
            activity.trip
            ?? TripProgress(
                start: previous.map { $0.timestamp >= anchor.timestamp ? $0 : anchor } ?? anchor,
                lastMove: anchor,
                distanceMeters: 0,
                topSpeed: 0,
                announced: false
            )
        trip.distanceMeters += step
        trip.lastMove = fix
        trip.topSpeed = max(trip.topSpeed, speed ?? 0)
        if !trip.announced
            && (trip.distanceMeters >= rules.minimumDistanceMeters
                || fix.timestamp - trip.start.timestamp >= Int64(rules.minimumDurationSeconds) * 1000)
        {
            trip.announced = true
            events.append(
                numbering.next(
                    .tripStarted(TripStart(start: trip.start, position: fix, distanceMeters: trip.distanceMeters))
                )
            )
        }
        activity.trip = trip
    }

    private static func end(_ trip: TripProgress, reason: TripEnd.Reason, decidedAt fix: Fix) -> TripEnd {
        TripEnd(
            start: trip.start,
            end: trip.lastMove,
            distanceMeters: trip.distanceMeters,
            topSpeedMetersPerSecond: trip.topSpeed,
            reason: reason,
            position: fix
        )
    }
}
