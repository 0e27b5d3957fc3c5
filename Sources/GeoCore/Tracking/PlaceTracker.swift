/// The region and time-zone rules for one fix of one device: `region.changed` and `timezone.changed`.
///
/// The same rules as the country's (see ``DeviceTracker``): a fix decides only when its whole accuracy disc has one
/// answer (``PlaceResolver/places(at:within:countryCode:)`` leaves it undecided otherwise), so driving along a
/// boundary never flaps; a change is announced after ``TrackerConfiguration/placeConfirmations`` deciding fixes in a
/// row; the first answer of a device is announced from its first fix (`from: null`), by the point when its disc does
/// not decide. At sea the last region and time zone are kept (the time-zone polygons draw nautical zones there, so a
/// ship does get those); arriving in a country where no region is known (or none of that country) announces the
/// region as `null`, so that a device never carries another country's region. Pure, like the tracker.
struct PlaceTracker {
    /// ``TrackerConfiguration/placeConfirmations``.
    let placeConfirmations: Int
    let resolver: any PlaceResolver

    /// A fix's region and time zone as looked up, before anything is applied: the country's change event describes
    /// its region with the same answer (``region``) rather than a lookup of its own.
    struct Lookup {
        /// The region: the disc's decision, or for a device with no region announced yet its point's answer where
        /// the disc does not decide.
        var region: PlaceDecision<PlaceRegion>
        /// The time zone, the same way.
        var zone: PlaceDecision<String>
        /// How far around the fix both answers stand (nil when either was not measured or did not decide).
        var clearance: Double?
    }

    /// Looks a fix up, whose accuracy is `accuracy` metres: nil when its disc lies inside `area` (the announced
    /// region and time zone stand, nothing to look up).
    ///
    /// `pointCountry` is the country the fix's point lies in (where its region is looked for). `area` is where the
    /// region and time zone were last looked up with room around them, kept (`keepsArea`: the fix lies in its
    /// device's country's area) or not: only then is the room measured.
    func lookUp(
        _ places: DevicePlaces,
        at fix: Fix,
        accuracy: Double,
        pointCountry: String?,
        area: CountryArea,
        keepsArea: Bool
    ) -> Lookup? {
        var lookup: Lookup
        if !keepsArea {
            lookup = Lookup(
                region: resolver.region(at: fix.coordinate, within: accuracy, countryCode: pointCountry),
                zone: resolver.timeZone(at: fix.coordinate, within: accuracy),
                clearance: nil
            )
        } else {
            if area.holds(fix.coordinate, accuracy: accuracy) { return nil }
            let (region, regionClearance) = resolver.region(
                at: fix.coordinate,
                within: accuracy,
                countryCode: pointCountry,
                clearanceUpTo: Self.areaReach
            )
            let (zone, zoneClearance) = resolver.timeZone(
                at: fix.coordinate,
                within: accuracy,
                clearanceUpTo: Self.areaReach
            )
            let clearance = regionClearance.flatMap { region in zoneClearance.map { min(region, $0) } }
            lookup = Lookup(region: region, zone: zone, clearance: clearance)
        }
        // A device with nothing announced yet takes its point's answer when its disc does not decide (an undecided
        // answer has no clearance: no area comes of it).
        if places.region == nil && places.regionCandidate == nil && lookup.region == .undecided {
            lookup.region = resolver.region(at: fix.coordinate, within: 0, countryCode: pointCountry)
        }
        if places.timeZone == nil && places.timeZoneCandidate == nil && lookup.zone == .undecided {
            lookup.zone = resolver.timeZone(at: fix.coordinate, within: 0)
        }
        return lookup
    }

    /// A country change with the region and locality of the fix that decided it, as its point lies: the lookup's
    /// region when its disc decided (a disc's region is its point's), else the point's own.
    func described(_ change: CountryChange, by lookup: Lookup?, at fix: Fix, pointCountry: String?) -> CountryChange {
        var region = lookup?.region ?? .undecided
        if region == .undecided { region = resolver.region(at: fix.coordinate, within: 0, countryCode: pointCountry) }
        return change.described(
            region: region.value,
            locality: resolver.locality(near: fix.coordinate, countryCode: pointCountry)
        )
    }

    /// Applies a fix's ``lookUp(_:at:accuracy:pointCountry:area:keepsArea:)`` to the device's places, appending the
    /// events; `deviceCountry` is the device's country after this fix.
    ///
    /// A fix whose disc lay inside `area` (no lookup) changes nothing. Otherwise `area` becomes the room around this
    /// fix when the answers were measured and stand for the announced region and time zone with nothing pending,
    /// and nothing else.
    func apply(
        _ lookup: Lookup?,
        to places: inout DevicePlaces,
        at fix: Fix,
        deviceCountry: String?,
        area: inout CountryArea,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        guard let lookup else { return }
        let firstRegion = places.region == nil && places.regionCandidate == nil
        let firstZone = places.timeZone == nil && places.timeZoneCandidate == nil
        updateRegion(
            &places,
            lookup.region,
            first: firstRegion,
            country: deviceCountry,
            fix: fix,
            numbering: &numbering,
            events: &events
        )
        updateTimeZone(&places, lookup.zone, first: firstZone, fix: fix, numbering: &numbering, events: &events)
        if let clearance = lookup.clearance, lookup.region == .decided(places.region),
            lookup.zone == .decided(places.timeZone), places.regionCandidate == nil, places.timeZoneCandidate == nil
        {
            area = CountryArea(center: fix.coordinate, clearance: clearance)
        } else {
            area = .none
        }
    }

    /// How far around a looked-up fix the tracker asks for the region and time zone to stay the same: as far as for
    /// the country (``DeviceTracker/countryAreaReach``), whose area the places' area stands inside.
    static let areaReach = DeviceTracker.countryAreaReach

    private func updateRegion(
        _ places: inout DevicePlaces,
        _ decision: PlaceDecision<PlaceRegion>,
        first: Bool,
        country: String?,
        fix: Fix,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        guard case .decided(let decided) = decision else { return }
        guard let region = decided else {
            // No region here: at sea (no country) keep the last; in a country, a region of another country goes.
            guard let last = places.region, let country, last.countryCode != country else { return }
            places.region = nil
            places.regionCandidate = nil
            places.regionCandidateFixes = 0
            events.append(
                numbering.next(.regionChanged(RegionChange(from: last, to: nil, countryCode: country, position: fix)))
            )
            return
        }
        var (candidate, fixes) = (places.regionCandidate, places.regionCandidateFixes)
        let confirmed = confirms(
            region.code,
            announced: places.region?.code,
            first: first,
            candidate: &candidate,
            fixes: &fixes
        )
        (places.regionCandidate, places.regionCandidateFixes) = (candidate, fixes)
        guard confirmed else { return }
        let change = RegionChange(
            from: places.region,
            to: region,
            countryCode: String(region.countryCode),
            position: fix
        )
        places.region = region
        places.regionCandidate = nil
        places.regionCandidateFixes = 0
        events.append(numbering.next(.regionChanged(change)))
    }

    private func updateTimeZone(
        _ places: inout DevicePlaces,
        _ decision: PlaceDecision<String>,
        first: Bool,
        fix: Fix,
        numbering: inout EventNumbering,
        events: inout [DeviceEvent]
    ) {
        guard case .decided(let decided) = decision, let zone = decided else { return }
        var (candidate, fixes) = (places.timeZoneCandidate, places.timeZoneCandidateFixes)
        let confirmed = confirms(zone, announced: places.timeZone, first: first, candidate: &candidate, fixes: &fixes)
        (places.timeZoneCandidate, places.timeZoneCandidateFixes) = (candidate, fixes)
        guard confirmed else { return }
        let change = TimeZoneChange(
            from: places.timeZone.map { withOffset($0, at: fix.timestamp) },
            to: withOffset(zone, at: fix.timestamp),
            position: fix
        )
        places.timeZone = zone
        places.timeZoneCandidate = nil
        places.timeZoneCandidateFixes = 0
        events.append(numbering.next(.timeZoneChanged(change)))
    }

    /// Whether a deciding fix in `code` is a change to announce now: not the announced one, and the device's first
    /// or confirmed by ``TrackerConfiguration/placeConfirmations`` fixes in a row.
    ///
    /// `candidate` and `fixes` are the device's pending change of this kind and how many fixes in a row placed it
    /// there: kept meanwhile, cleared by a fix in the announced one.
    private func confirms(
        _ code: String,
        announced: String?,
        first: Bool,
        candidate: inout String?,
        fixes: inout Int
    ) -> Bool {
        if code == announced {
            (candidate, fixes) = (nil, 0)
            return false
        }
        if first { return true }
        return ChangeConfirmation.confirms(
            code,
            candidate: &candidate,
            fixes: &fixes,
            needed: placeConfirmations
        )
    }

    private func withOffset(_ identifier: String, at time: Int64) -> TimeZoneChange.Zone {
        TimeZoneChange.Zone(
            identifier: identifier,
            utcOffsetSeconds: resolver.utcOffset(ofTimeZone: identifier, at: time)
        )
    }
}
