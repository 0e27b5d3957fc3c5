/// The geofence rules for one fix against the fleet's catalog: the same rules a pin has (``GeofenceEvaluator``:
/// hysteresis, initial state, dwell, crossings between sparse fixes, approaching), for each catalog geofence the
/// device's tags reach that lies near the fix's path or that the device has a visit of.
///
/// The catalog is asked at the fix's own time, so a change applies from its message time on. A geofence the device
/// is outside of keeps nothing (``GeofenceStanding/isOutsideOnly``); one that came in force since the device's last fix
/// is met for the first time (its initial state); one deleted, or no longer reached by the device's tags, ends its
/// visit announcing nothing. At most `maxVisits` visits a device: a geofence met beyond them is not decided for it,
/// and counted.
///
/// Pure, like the ``DeviceTracker`` that will call it for every fix of a subscribed device.
struct CatalogTracking {
    let evaluator: GeofenceEvaluator
    let maxVisits: Int

    /// Decides the fix's context against the catalog's geofences, appending their events.
    ///
    /// - Parameters:
    ///   - context: the fix.
    ///   - device: the device's catalog standing.
    ///   - catalog: the catalog, asked at the fix's time.
    ///   - area: the device's ``CatalogArea``, kept by the caller from one fix to the next (made or made again here).
    ///   - keepsArea: false when the caller keeps no area: the catalog's grid is asked at every fix.
    ///   - defaultTags: the tags every device has.
    ///   - numbering: the events' ids.
    ///   - events: where the events go.
    /// - Returns: how many geofences were met and not decided because the device had `maxVisits` visits.
    func apply(
        _ context: GeofenceEvaluator.FixContext,
        to device: inout CatalogVisits,
        catalog: GeofenceCatalog,
        area: inout CatalogArea?,
        keepsArea: Bool = true,
        defaultTags: [String],
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) -> Int {
        let time = context.fix.timestamp
        guard !device.subscriptions.isEmpty || !defaultTags.isEmpty else {
            device.visits = [:]
            return 0
        }
        // Both lists are short and sorted: looked through, not hashed (a set made at every fix cost a tenth of it).
        let subscriptions = device.subscriptions
        func reaches(_ number: Int32) -> Bool {
            catalog.tags(number: number).contains { subscriptions.contains($0) || defaultTags.contains($0) }
        }
        // Decided in the order of their ids, whatever order the catalog keeps them in (it follows the order its
        // records were read in, which differs between instances and runs): the events' ids number them in order.
        // Kept by version number: a geofence is copied out of the catalog only when it is decided.
        var candidates: [(number: Int32, firstMeeting: Bool)] = []
        let box = Self.box(around: context, reach: reach(context, catalog))
        let decidedAt = device.decidedAt
        var inOrder = true
        if keepsArea {
            // The area holds the versions the device's tags reach, in the order of their ids.
            if area.map({ !$0.holds(box, at: time, for: subscriptions, in: catalog) }) ?? true {
                area = CatalogArea(around: box, at: time, in: catalog, for: subscriptions, reaching: reaches)
            }
            area!.forEachVersion(meeting: box) { number, since in
                candidates.append((number, decidedAt.map { since > $0 } ?? true))
            }
        } else {
            catalog.forEachVersion(meeting: box, at: time) { number, since in
                guard reaches(number) else { return }
                candidates.append((number, decidedAt.map { since > $0 } ?? true))
            }
            inOrder = false
        }
        // Visits the lookup did not meet: a geofence left far behind, moved away, deleted, or no longer subscribed.
        if !device.visits.isEmpty {
            // A few candidates and visits: looked through rather than hashed into a set at every fix.
            for id in device.visits.keys where !candidates.contains(where: { catalog.id(number: $0.number) == id }) {
                if let (number, _) = catalog.version(id, at: time), reaches(number) {
                    candidates.append((number, false))
                    inOrder = false
                } else {
                    device.visits[id] = nil
                }
            }
        }
        if !inOrder { candidates.sort { catalog.id(number: $0.number) < catalog.id(number: $1.number) } }
        var refused = 0
        for candidate in candidates {
            let decided = decide(
                catalog.geofence(number: candidate.number),
                firstMeeting: candidate.firstMeeting,
                context,
                &device,
                numbering: &numbering,
                events: &events
            )
            if !decided { refused += 1 }
        }
        device.decidedAt = time
        return refused
    }

    /// A `subscribe` of `tags`: the geofences near the device's last fix that only the new tags reach are met for the
    /// first time there, as a tracked pin is checked from the last fix (an initial `geofence.entered` where the device
    /// is inside), with the catalog as it stands at the command's `time`.
    ///
    /// Without a fix that can decide geofences, the next fix decides every geofence the device has no visit of as met
    /// for the first time: one it had been outside of and is inside of then is announced as an initial entry.
    ///
    /// - Returns: how many geofences were met and not decided because the device had `maxVisits` visits.
    func subscribe(
        to tags: [String],
        _ device: inout CatalogVisits,
        lastFix context: GeofenceEvaluator.FixContext?,
        at time: Int64,
        catalog: GeofenceCatalog,
        defaultTags: [String],
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) -> Int {
        let reached = Set(device.subscriptions).union(defaultTags)
        device.subscribe(to: tags)
        let added = Set(tags).subtracting(reached)
        guard !added.isEmpty else { return 0 }
        guard let context else {
            device.decidedAt = nil
            return 0
        }
        var met: [CatalogGeofence] = []
        catalog.forEach(meeting: Self.box(around: context, reach: context.margin), at: time) { geofence, _ in
            guard geofence.tags.contains(where: added.contains), !geofence.tags.contains(where: reached.contains),
                device.visits[geofence.id] == nil
            else { return }
            met.append(geofence)
        }
        var refused = 0
        // In the order of their ids, as at a fix.
        for geofence in met.sorted(by: { $0.id < $1.id }) {
            if !decide(geofence, firstMeeting: true, context, &device, numbering: &numbering, events: &events) {
                refused += 1
            }
        }
        return refused
    }

    /// Applies the fix to one geofence (`firstMeeting`: its initial state, unless a visit says otherwise); false when
    /// it was not decided for want of room.
    private func decide(
        _ geofence: CatalogGeofence,
        firstMeeting: Bool,
        _ context: GeofenceEvaluator.FixContext,
        _ device: inout CatalogVisits,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) -> Bool {
        let id = geofence.geofence.id
        let known = device.visits[id]
        if known == nil && device.visits.count >= maxVisits { return false }
        var standing = known ?? GeofenceStanding(membership: firstMeeting ? .undetermined : .outside)
        let first = events.count
        evaluator.evaluate(geofence.geofence, &standing, context, numbering: &numbering, events: &events)
        // The events name the geofence as the catalog's.
        for index in first..<events.count { events[index].catalogTags = geofence.tags }
        if standing.isOutsideOnly {
            if known != nil { device.visits[id] = nil }
        } else if standing != known {
            device.visits[id] = standing
        }
        return true
    }

    /// How far from the fix's path a geofence may matter: its hysteresis margin, and for an approach the distance
    /// the device covers at its speed within the catalog's longest approach horizon.
    private func reach(_ context: GeofenceEvaluator.FixContext, _ catalog: GeofenceCatalog) -> Double {
        let approach = context.motion.speed.map { $0 * Double(catalog.longestApproachSeconds) } ?? 0
        return max(context.margin, context.previous?.margin ?? 0) + approach
    }

    /// `box` widened by `metres` on every side (its longitudes by the widest latitude's degree).
    static func widen(
        _ box: (west: Double, south: Double, east: Double, north: Double),
        by metres: Double
    ) -> (west: Double, south: Double, east: Double, north: Double) {
        let north = box.north + metres / LocalPlane.metresPerDegree
        let south = box.south - metres / LocalPlane.metresPerDegree
        let widest = min(89.9, max(abs(north), abs(south)))
        let degreesEast = metres / (LocalPlane.metresPerDegree * _cos(widest * .pi / 180))
        return (west: box.west - degreesEast, south: south, east: box.east + degreesEast, north: north)
    }

    /// The box around the path from the previous fix (when the rules use it) to this one, widened by `reach` metres.
    static func box(
        around context: GeofenceEvaluator.FixContext,
        reach: Double
    ) -> (west: Double, south: Double, east: Double, north: Double) {
        let here = context.fix.coordinate
        let there = context.previous?.fix.coordinate ?? here
        let path = (
            west: min(here.longitude, there.longitude), south: min(here.latitude, there.latitude),
            east: max(here.longitude, there.longitude), north: max(here.latitude, there.latitude)
        )
        return widen(path, by: reach)
    }
}
