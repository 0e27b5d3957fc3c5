/// The geofence rules for one fix against one pin: membership with hysteresis, dwell, crossings between sparse fixes,
/// and approaching.
///
/// Pure, like the ``DeviceTracker`` that calls it for every pin of a device.
struct GeofenceEvaluator {
    let configuration: TrackerConfiguration

    /// What a fix brings to every pin of its device: where it is, how accurate, the fix before it (when it
    /// can say something about the path between them) and how the device moves.
    struct FixContext {
        let fix: Fix
        /// The hysteresis margin of `fix`: its accuracy, else the assumed one.
        let margin: Double
        let plane: LocalPlane
        /// The device's previous fix, when it was accurate enough for geofences and at most
        /// ``TrackerConfiguration/maxFixGapSeconds`` older: the straight line between the two means something.
        let previous: (fix: Fix, margin: Double)?
        /// Empty unless a pin of the device watches for approaches (the only rule that reads it).
        let motion: FixMotion

        /// A fix alone (the initial-state check when a pin is tracked): no path, no motion.
        init(fix: Fix, margin: Double) {
            self.init(fix: fix, margin: margin, previous: nil, motion: FixMotion())
        }

        init(fix: Fix, margin: Double, previous: (fix: Fix, margin: Double)?, motion: FixMotion) {
            self.fix = fix
            self.margin = margin
            self.plane = LocalPlane(at: fix.coordinate)
            self.previous = previous
            self.motion = motion
        }
    }

    /// Applies the fix to `pin`, where the device stood as `standing` says, appending the events it causes.
    ///
    /// The pin is borrowed, not kept: a catalog geofence is read where the catalog holds it, and only an event copies
    /// it.
    func evaluate(
        _ pin: Pin,
        _ standing: inout GeofenceStanding,
        _ context: FixContext,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        let fix = context.fix
        let margin = context.margin
        // Most pins are far from most fixes: a cheap lower bound of the distance decides them outside without
        // measuring the shape; it is measured (`placement`) only when a decision, an event or an approach
        // needs the exact distance.
        let bound = pin.shape.distanceLowerBound(from: fix.coordinate, plane: context.plane)
        let decided =
            bound > margin ? .outside : pin.shape.decision(at: fix.coordinate, margin: margin, plane: context.plane)
        var measured: PinPlacement?
        /// Measured when an event or an approach needs it, which is only ever at a fix that decided.
        func placement() -> PinPlacement {
            if let measured { return measured }
            let placement = pin.shape.placement(
                of: fix.coordinate,
                plane: context.plane,
                knownInside: decided == .inside
            )
            measured = placement
            return placement
        }
        let before = standing.membership
        if let decided, decided != before {
            standing.membership = decided
            standing.since = fix.timestamp
            standing.dwellAnnounced = false
            standing.approachArrival = nil  // arrived, or left: no approach under way
            switch (before, decided) {
            case (_, .inside):
                events.append(numbering.next(.geofenceEntered(crossing(of: pin, before: before, fix, placement()))))
            case (.inside, .outside):
                standing.rearmApproach()  // a new approach may follow
                events.append(numbering.next(.geofenceExited(crossing(of: pin, before: before, fix, placement()))))
            default: break  // first decision is "outside": nothing to announce
            }
        }
        if decided == .outside && before == .outside, let previous = context.previous,
            passedThrough(pin.shape, from: previous, context)
        {
            standing.rearmApproach()
            let passage = GeofencePassage(pin: pin, from: previous.fix, to: fix)
            events.append(numbering.next(.geofenceCrossed(passage)))
        }
        if standing.membership == .inside, let dwell = pin.dwellSeconds, !standing.dwellAnnounced,
            let since = standing.since, fix.timestamp - since >= Int64(dwell) * 1000
        {
            standing.dwellAnnounced = true
            let stay = GeofenceDwell(
                pin: pin,
                position: fix,
                insideSince: since,
                dwellSeconds: Double(fix.timestamp - since) / 1000
            )
            events.append(numbering.next(.geofenceDwelled(stay)))
        }
        if decided == .outside, let horizon = pin.approachSeconds,
            mayApproach(pin, standing, context, bound: bound)
        {
            approach(
                pin,
                &standing,
                placement: placement(),
                horizon: horizon,
                context,
                numbering: &numbering,
                events: &events
            )
        }
    }

    /// What `geofence.entered` and `geofence.exited` say of a membership decided at `fix`.
    private func crossing(
        of pin: Pin,
        before: Membership,
        _ fix: Fix,
        _ placement: PinPlacement
    ) -> GeofenceCrossing {
        GeofenceCrossing(
            pin: pin,
            position: fix,
            distanceMeters: placement.eventDistance(for: pin.shape),
            initial: before == .undetermined
        )
    }

    /// Whether the device, outside at the previous fix and now, went through the pin by more than the
    /// accuracy of either fix in between.
    private func passedThrough(
        _ shape: PinShape,
        from previous: (fix: Fix, margin: Double),
        _ context: FixContext
    ) -> Bool {
        let depth = max(previous.margin, context.margin)
        guard shape.pathMayPassInside(from: previous.fix.coordinate, to: context.fix.coordinate, margin: depth) else {
            return false
        }
        // Both fixes must decide outside; a previous fix within its accuracy of the edge decided nothing.
        let previousPlane = LocalPlane(at: previous.fix.coordinate)
        if shape.distanceLowerBound(from: previous.fix.coordinate, plane: previousPlane) <= previous.margin {
            let start = shape.placement(of: previous.fix.coordinate, plane: previousPlane)
            guard !start.inside && start.edgeDistance > previous.margin else { return false }
        }
        return shape.pathPassesInside(from: previous.fix.coordinate, to: context.fix.coordinate, margin: depth)
    }

    /// Whether an approach may need deciding at a fix `bound` metres or more from the pin.
    private func mayApproach(_ pin: Pin, _ standing: GeofenceStanding, _ context: FixContext, bound: Double) -> Bool {
        guard let horizon = pin.approachSeconds, let speed = context.motion.speed, context.motion.heading != nil
        else { return false }
        // An announced approach needs every fix's direction to notice the device moving away.
        return standing.approachAnnounced || bound <= speed * Double(horizon)
    }

    /// Announces an approach, or re-arms it when the device moves away.
    private func approach(
        _ pin: Pin,
        _ standing: inout GeofenceStanding,
        placement: PinPlacement,
        horizon: Int,
        _ context: FixContext,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        guard let speed = context.motion.speed, let heading = context.motion.heading,
            speed >= configuration.approachMinimumSpeed
        else { return }
        let bearing = LocalPlane.bearing(x: placement.nearestX, y: placement.nearestY)
        let off = FixMotion.angle(between: heading, and: bearing)
        if off > 90 {
            standing.rearmApproach()
            return
        }
        let eta = placement.edgeDistance / speed
        let arrival = context.fix.timestamp + Int64((eta * 1000).rounded())
        if standing.approachAnnounced {
            // Under way: each fix that still heads for the pin updates when it is expected.
            standing.approachArrival = arrival
            return
        }
        guard off <= configuration.approachHeadingToleranceDegrees, eta <= Double(horizon) else { return }
        standing.approachAnnounced = true
        standing.approachArrival = arrival
        let approach = GeofenceApproach(
            pin: pin,
            position: context.fix,
            etaSeconds: eta,
            distanceMeters: placement.edgeDistance,
            speedMetersPerSecond: speed,
            basis: context.motion.speedBasis
        )
        events.append(numbering.next(.geofenceApproaching(approach)))
    }
}

extension PinPlacement {
    /// The distance `geofence.entered` and `geofence.exited` report: to a circle's centre (as since the first
    /// version of the contract), to a polygon's nearest edge.
    func eventDistance(for shape: PinShape) -> Double {
        switch shape {
        case .circle(_, let radius): inside ? radius - edgeDistance : radius + edgeDistance
        case .polygon: edgeDistance
        }
    }
}
