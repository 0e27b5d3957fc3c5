/// The pure state machine at the heart of geoworker: `(state, message) -> (state', [event])`.
///
/// It does no I/O, reads no clock (time comes from the messages) and holds no state of its own: the
/// caller keeps each device's ``DeviceState`` and publishes the events. Feeding the same messages to the
/// same states always gives the same events with the same ids.
///
/// Rules (the product's semantics):
/// - Geofences use hysteresis of one accuracy radius `m` (the fix's reported accuracy, else
///   ``TrackerConfiguration/assumedAccuracyMeters``): a fix decides *inside* a pin when it lies inside at least `m`
///   from the pin's edge (for a circle of radius `r`: at most `r - m` from its centre), *outside* when it lies
///   outside more than `m` from it, and nothing in between. A device hovering at the boundary within its
///   accuracy therefore produces no enter/exit pairs. Fixes less accurate than
///   ``TrackerConfiguration/maxAccuracyMeters`` decide nothing. Polygons, dwell, crossings between sparse fixes
///   and approaching are the ``GeofenceEvaluator``'s rules, applied to each pin in turn.
/// - A pin's first decision after it is tracked is its initial state: inside gives one
///   `geofence.entered` with `initial: true`, outside gives no event. The check runs when the pin is
///   tracked (from the last known position) and otherwise at the first deciding fix. Announced states
///   are part of the persisted state, so a restart never announces them again.
/// - A position no newer than the newest applied one (by its own timestamp) changes nothing and is
///   reported as stale or duplicate.
/// - Countries follow the fix's accuracy, the same idea as the geofences' hysteresis: a fix *decides* a
///   country only when the whole disc of its accuracy radius (reported, else the assumed accuracy) lies in
///   it (``CountryResolver/countryCode(at:within:)``, coastal tolerance included). A deciding fix in another
///   country announces the change at once (a device that reports once an hour gets it on that one fix;
///   ``TrackerConfiguration/countryConfirmations`` can ask for more deciding fixes in a row); a fix within
///   its accuracy of a border decides nothing, so hovering along a border never flaps; fixes at sea beyond
///   the coastal tolerance keep the last country. The first fix of a device announces the country its
///   position lies in (`from: null`): there is nothing to flap from. Each announcement comes with a language
///   suggestion when the ``LanguageAdvisor`` has one.
/// - `untrack` and `untrackAll` emit no exit. Tracking a pin id again replaces the pin; an identical
///   pin is left as it is (commands may be retried), a changed one gets a fresh initial check.
public struct DeviceTracker: Sendable {
    /// What became of one message.
    public struct Outcome: Hashable, Sendable {
        public enum Kind: Hashable, Sendable {
            /// Applied, and the position took part in geofence decisions if the device has pins.
            case applied
            /// Applied, but the fix was too inaccurate for geofence decisions.
            case appliedWithoutGeofences
            /// Older than the newest position applied for the device: ignored.
            case stale
            /// As old as the newest position applied for the device: ignored.
            case duplicate
            /// A command that cannot be carried out, with the reason (for the dead-letter topic).
            case rejected(String)
        }

        public let kind: Kind
        /// Catalog geofences the message met and did not decide for the device, which had
        /// ``TrackerConfiguration/maxCatalogVisits`` visits already.
        public var catalogGeofencesNotDecided: Int

        public init(kind: Kind, catalogGeofencesNotDecided: Int = 0) {
            self.kind = kind
            self.catalogGeofencesNotDecided = catalogGeofencesNotDecided
        }

        static let applied = Outcome(kind: .applied)
    }

    public let configuration: TrackerConfiguration
    public let countries: any CountryResolver
    public let languages: (any LanguageAdvisor)?
    /// Regions, localities and time zones (``PlaceTracker``); without it, no place events.
    public let places: (any PlaceResolver)?
    /// The fleet's shared geofences; without it, devices are decided against their pins only.
    public let catalog: FleetCatalog?
    /// The place rules with `places`, made once: one made at every fix copied the configuration and the resolver.
    private let placeTracker: PlaceTracker?

    public init(
        configuration: TrackerConfiguration = TrackerConfiguration(),
        countries: any CountryResolver,
        languages: (any LanguageAdvisor)? = nil,
        places: (any PlaceResolver)? = nil,
        catalog: FleetCatalog? = nil
    ) {
        self.configuration = configuration
        self.countries = countries
        self.languages = languages
        self.places = places
        self.catalog = catalog
        placeTracker = places.map {
            PlaceTracker(placeConfirmations: configuration.placeConfirmations, resolver: $0)
        }
    }

    // MARK: Positions

    /// Applies a position to its device's state, appending the events it causes to `events`.
    public func apply(
        _ position: Position,
        origin: MessageOrigin,
        to state: inout DeviceState,
        events: inout [DeviceEvent]
    ) -> Outcome {
        // No area kept from one position to the next: the resolver is not asked for one either (measuring the
        // clearance costs more than the plain lookup).
        var areas = DeviceAreas()
        return apply(
            position,
            origin: origin,
            streamTime: nil,
            to: &state,
            areas: &areas,
            keepsArea: false,
            events: &events
        )
    }

    /// Applies a position to its device's state, appending the events it causes to `events`.
    ///
    /// `areas` are where the device's country, and its region and time zone, were last looked up with room around them
    /// (``CountryArea``), kept beside the state by the caller from one position to the next, so that fixes inside
    /// them are not looked up again. `streamTime` is the position's pair's stream time before it, when there is a
    /// stream: when the device was heard (``DeviceState/lastHeard``).
    public func apply(
        _ position: Position,
        origin: MessageOrigin,
        streamTime: Int64? = nil,
        to state: inout DeviceState,
        areas: inout DeviceAreas,
        events: inout [DeviceEvent]
    ) -> Outcome {
        apply(
            position,
            origin: origin,
            streamTime: streamTime,
            to: &state,
            areas: &areas,
            keepsArea: true,
            events: &events
        )
    }

    private func apply(
        _ position: Position,
        origin: MessageOrigin,
        streamTime: Int64?,
        to state: inout DeviceState,
        areas: inout DeviceAreas,
        keepsArea: Bool,
        events: inout [DeviceEvent]
    ) -> Outcome {
        let first = events.count
        defer { dropDisabledEvents(from: first, in: &events) }
        if let last = state.lastFix {
            if position.timestamp < last.timestamp { return Outcome(kind: .stale) }
            if position.timestamp == last.timestamp { return Outcome(kind: .duplicate) }
        }
        let fix = Fix(position)
        let previous = state.lastFix
        state.lastFix = fix
        if !position.languages.isEmpty && position.languages != state.languages { state.languages = position.languages }

        var numbering = EventNumbering(origin: origin, deviceId: state.deviceId, time: position.timestamp)
        silenceWatch.applyFix(
            fix,
            previous: previous,
            heardAt: streamTime.map { max($0, origin.timestamp) },
            to: &state,
            numbering: &numbering,
            events: &events
        )
        let margin = position.accuracy ?? configuration.assumedAccuracyMeters
        let usable = margin <= configuration.maxAccuracyMeters
        let catalog = usesCatalog(state) ? catalog : nil
        var outcome = Outcome(kind: usable ? .applied : .appliedWithoutGeofences)
        let watchesSpeed =
            configuration.speeding.limitMetersPerSecond != nil
            || state.readActivity(absent: false) { $0.speedLimit != nil }
        let followsActivity = configuration.trips != nil || watchesSpeed
        if !followsActivity && state.hasActivity { forgetActivity(of: &state) }
        if usable && (!state.pins.isEmpty || catalog != nil || followsActivity) {
            let approaches =
                state.pins.contains { $0.pin.approachSeconds != nil }
                || catalog.map { $0.geofences.longestApproachSeconds > 0 } ?? false
            let context = fixContext(
                position,
                fix: fix,
                margin: margin,
                previous: previous,
                needsMotion: followsActivity || approaches,
                needsHeading: approaches
            )
            if followsActivity {
                applyActivity(
                    context,
                    previous: previous,
                    watchesSpeed: watchesSpeed,
                    to: &state,
                    numbering: &numbering,
                    events: &events
                )
            }
            for index in state.pins.indices {
                state.pins[index].evaluate(geofences, context, numbering: &numbering, events: &events)
            }
            if let catalog {
                // Taken out of the state while it changes: a copy left behind would make every change of its
                // visits copy them.
                var visits = state.catalog.take() ?? CatalogVisits()
                outcome.catalogGeofencesNotDecided = catalogTracking.apply(
                    context,
                    to: &visits,
                    catalog: catalog.geofences,
                    area: &areas.catalog,
                    keepsArea: keepsArea,
                    defaultTags: configuration.catalogTags,
                    numbering: &numbering,
                    events: &events
                )
                state.catalog = visits
            }
        }
        let (decided, change) = updateCountry(
            of: &state,
            at: fix,
            accuracy: margin,
            area: &areas.country,
            keepsArea: keepsArea
        )
        // The places of the fix are looked up in the country its point lies in: the decided one when its disc
        // decided it. They are looked up before the country's events are appended, whose region is the same answer.
        let pointCountry = placeTracker == nil ? nil : decided ?? countries.countryCode(at: fix.coordinate)
        var placeLookup: PlaceTracker.Lookup?
        if placeTracker != nil {
            // A place area stands only inside the country's (there the fix's disc lies in the device's country),
            // and for the country it was made in.
            if areas.placesCountry != state.country {
                areas.places = .none
                areas.placesCountry = state.country
            }
            placeLookup = placeTracker?.lookUp(
                state.places,
                at: fix,
                accuracy: margin,
                pointCountry: pointCountry,
                area: areas.places,
                keepsArea: keepsArea && areas.country.holds(fix.coordinate, accuracy: margin)
            )
        } else {
            areas.places = .none
        }
        if var change {
            if let described = placeTracker?.described(change, by: placeLookup, at: fix, pointCountry: pointCountry) {
                change = described
            }
            events.append(numbering.next(.countryChanged(change)))
            if let suggestion = languages?.suggestion(for: change.to, deviceLanguages: state.languages) {
                events.append(numbering.next(.languageSuggested(suggestion)))
            }
        }
        placeTracker?.apply(
            placeLookup,
            to: &state.places,
            at: fix,
            deviceCountry: state.country,
            area: &areas.places,
            numbering: &numbering,
            events: &events
        )
        return outcome
    }

    /// Whether the device is decided against the catalog: there is one, and the device subscribed or every device
    /// subscribes to some tags (``TrackerConfiguration/catalogTags``).
    private func usesCatalog(_ state: DeviceState) -> Bool {
        catalog != nil && (state.catalog != nil || !configuration.catalogTags.isEmpty)
    }

    /// What the geofence rules need of a fix: the previous fix only when it was accurate enough to decide
    /// geofences and recent enough for the straight line between them to mean something; the device's motion
    /// only when a rule reads it (`needsMotion`: approaches, trips, speeding; deriving it takes a haversine, a cosine
    /// and an arctangent), and its heading only for approaches (`needsHeading`).
    private func fixContext(
        _ position: Position,
        fix: Fix,
        margin: Double,
        previous: Fix?,
        needsMotion: Bool,
        needsHeading: Bool = true
    ) -> GeofenceEvaluator.FixContext {
        var path: (fix: Fix, margin: Double)?
        if let previous {
            let previousMargin = previous.accuracy ?? configuration.assumedAccuracyMeters
            let gap = position.timestamp - previous.timestamp
            if previousMargin <= configuration.maxAccuracyMeters
                && gap <= Int64(configuration.maxFixGapSeconds) * 1000
            {
                path = (previous, previousMargin)
            }
        }
        let motion =
            needsMotion
            ? FixMotion(
                position: position,
                margin: margin,
                previous: path,
                maximumGapSeconds: configuration.maxFixGapSeconds,
                needsHeading: needsHeading
            ) : FixMotion()
        return GeofenceEvaluator.FixContext(fix: fix, margin: margin, previous: path, motion: motion)
    }

    var geofences: GeofenceEvaluator { GeofenceEvaluator(configuration: configuration) }

    var catalogTracking: CatalogTracking {
        CatalogTracking(evaluator: geofences, maxVisits: configuration.maxCatalogVisits)
    }

    /// How far around a looked-up fix the tracker asks the resolver to say no border lies (``CountryArea``).
    ///
    /// A device far from borders is looked up again about every 10 km, whether it reports every 100 m or every few
    /// kilometres (a fix a minute on a motorway; with 2 km every such fix was a lookup). A wider reach costs the
    /// lookup little (places-bench: the same per position for devices driving 100 m a fix, half for devices
    /// jumping 3.7 km) and is bounded by the 1 % of ``CountryArea/holds(_:accuracy:)``.
    static let countryAreaReach = 10_000.0

    /// Decides the device's country from the fix: returns the country the fix's disc decided (nil when it decided
    /// none), and the change to announce, if any.
    private func updateCountry(
        of state: inout DeviceState,
        at fix: Fix,
        accuracy: Double,
        area: inout CountryArea,
        keepsArea: Bool
    ) -> (decided: String?, change: CountryChange?) {
        // The first fix: the country the position lies in. Later: only a fix whose whole accuracy disc lies
        // in one country decides (nil: near a border, or at sea beyond the tolerance: keep the last); a disc
        // inside the area around the last lookup lies in the device's country.
        let decided: String?
        var freshArea = area
        if state.country == nil {
            decided = countries.countryCode(at: fix.coordinate)
            freshArea = .none
        } else if area.holds(fix.coordinate, accuracy: accuracy) {
            decided = state.country
        } else if !keepsArea {
            decided = countries.countryCode(at: fix.coordinate, within: accuracy)
        } else {
            let (code, clearance) = countries.countryCode(
                at: fix.coordinate,
                within: accuracy,
                clearanceUpTo: Self.countryAreaReach
            )
            decided = code
            freshArea = clearance.map { CountryArea(center: fix.coordinate, clearance: $0) } ?? .none
        }
        // An area stands for the device's country: kept only while that is the country it lies in (a first
        // fix in another country that needs confirming does not change the device's country yet).
        defer { area = decided != nil && decided == state.country ? freshArea : .none }
        guard let code = decided else { return (nil, nil) }
        if code == state.country {
            state.countryCandidate = nil
            state.countryCandidateFixes = 0
            return (code, nil)
        }
        if state.country != nil {
            guard
                ChangeConfirmation.confirms(
                    code,
                    candidate: &state.countryCandidate,
                    fixes: &state.countryCandidateFixes,
                    needed: configuration.countryConfirmations
                )
            else { return (code, nil) }
        }
        let change = CountryChange(
            from: state.country,
            to: code,
            countryName: countries.countryName(for: code),
            position: fix
        )
        state.country = code
        state.countryCandidate = nil
        state.countryCandidateFixes = 0
        return (code, change)
    }
}
