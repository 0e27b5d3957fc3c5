import JSONCodec

/// What geoworker knows of one device right now, as an operator's status card shows it: the last fix, the
/// country with how far it can be trusted, the language it would suggest, every pin's state, and its catalog
/// subscriptions with the catalog geofences it is inside, near or approaching.
///
/// Pure: built from the device's state and whether this instance has seen a fix of it since it took the
/// device; written as the JSON of `GET /devices/{deviceId}` (`Schemas/device-status.schema.json`).
public struct DeviceStatusCard: Sendable {
    /// How far the card's location can be trusted, as the app's `LocationStatus` put it.
    public enum LocationStatus: String, Sendable {
        /// No fix of the device yet.
        case unknown
        /// Restored from the store or the changelog; no fix has confirmed it since this instance took the
        /// device (another instance, or this one before a restart, may have seen newer ones).
        case cached
        /// A fix applied by this instance since it took the device.
        case current
    }

    public let state: DeviceState
    public let status: LocationStatus
    public let countryName: String?
    public let suggestion: LanguageSuggestion?
    /// With places: the populated place nearest the last fix.
    public let locality: Locality?
    /// With places: the device's time zone and, at the card's time, its offset from UTC.
    public let timeZone: TimeZoneChange.Zone?
    /// The time the card was asked for (milliseconds since the epoch): the moment of its local time.
    public let now: Int64
    /// The catalog geofences the device has a visit of (inside, undecided near an edge, approaching), by id, with the
    /// catalog's current version of each; a visit of one deleted since is left out (it ends at the next fix).
    public let catalogVisits: [(geofence: CatalogGeofence, visit: GeofenceStanding)]
    /// The speed limit the device is watched against (its own, else the default); nil: none.
    public let speedLimitInForce: Double?
    /// The silence threshold the device is watched against, in seconds (its own, else the default); nil: none.
    public let silenceThreshold: Int?

    /// - Parameters:
    ///   - state: the device's state.
    ///   - confirmedByFix: whether this instance has applied a position of the device since it took it.
    ///   - tracker: the tracker whose country names, language advice and places the card uses.
    ///   - now: the time the card is asked for, for the device's local time.
    public init(state: DeviceState, confirmedByFix: Bool, tracker: DeviceTracker, now: Int64) {
        self.state = state
        if state.lastFix == nil {
            status = .unknown
        } else {
            status = confirmedByFix ? .current : .cached
        }
        countryName = state.country.map { tracker.countries.countryName(for: $0) }
        suggestion = state.country.flatMap {
            tracker.languages?.suggestion(for: $0, deviceLanguages: state.languages)
        }
        self.now = now
        speedLimitInForce = tracker.speedWatch.limit(of: state.activity)
        silenceThreshold = tracker.silenceWatch.threshold(of: state)
        catalogVisits = (state.catalog?.visits ?? [:]).sorted { $0.key < $1.key }.compactMap { id, visit in
            tracker.catalog?.geofences[id].map { ($0, visit) }
        }
        if let places = tracker.places, let fix = state.lastFix {
            locality = places.locality(near: fix.coordinate, countryCode: state.country)
        } else {
            locality = nil
        }
        timeZone = tracker.places.flatMap { places in
            state.places.timeZone.map {
                TimeZoneChange.Zone(identifier: $0, utcOffsetSeconds: places.utcOffset(ofTimeZone: $0, at: now))
            }
        }
    }

    /// The card as JSON.
    public func json() -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.member("deviceId", state.deviceId)
        json.key("partition")
        json.number(Double(state.inputPartition))
        json.key("lastFix")
        if let fix = state.lastFix { json.fix(fix) } else { json.null() }
        json.key("country")
        json.beginObject()
        json.member("status", status.rawValue)
        json.key("code")
        if let code = state.country { json.string(code) } else { json.null() }
        if let countryName { json.member("name", countryName) }
        json.endObject()
        json.key("region")
        json.region(state.places.region)
        json.key("locality")
        json.locality(locality)
        json.key("timeZone")
        if let timeZone {
            json.beginObject()
            json.member("timeZone", timeZone.identifier)
            json.key("utcOffsetSeconds")
            if let offset = timeZone.utcOffsetSeconds {
                json.number(Double(offset))
                json.member("localTime", Self.localTime(now, offsetSeconds: offset))
            } else {
                json.null()
            }
            json.endObject()
        } else {
            json.null()
        }
        json.key("languages")
        json.beginArray()
        for language in state.languages { json.string(language) }
        json.endArray()
        json.key("suggestedLanguage")
        if let suggestion {
            json.beginObject()
            json.member("language", suggestion.language)
            json.member("basis", suggestion.basis.rawValue)
            json.endObject()
        } else {
            json.null()
        }
        json.key("pins")
        json.beginArray()
        for tracked in state.pins { json.pinStatus(tracked, lastFix: state.lastFix) }
        json.endArray()
        if let catalog = state.catalog {
            json.key("catalog")
            json.beginObject()
            json.key("subscriptions")
            json.beginArray()
            for tag in catalog.subscriptions { json.string(tag) }
            json.endArray()
            json.key("geofences")
            json.beginArray()
            for (geofence, visit) in catalogVisits {
                json.pinStatus(
                    TrackedPin(pin: geofence.geofence, standing: visit),
                    lastFix: state.lastFix,
                    catalogTags: geofence.tags
                )
            }
            json.endArray()
            json.endObject()
        }
        if state.hasActivity { json.activity(state.activity, speedLimitInForce: speedLimitInForce) }
        if let silenceThreshold {
            // Silent by the card's time: what an operator asks; the events go by message time.
            json.key("liveness")
            json.beginObject()
            json.key("silentAfterSeconds")
            json.number(Double(silenceThreshold))
            json.key("silentSince")
            // From when it was last heard, if later than its fix's own time (``DeviceState/lastHeard``).
            if let fix = state.lastFix,
                case let since = max(fix.timestamp, state.lastHeard ?? fix.timestamp) + Int64(silenceThreshold) * 1000,
                now >= since
            {
                json.timestamp(since)
            } else {
                json.null()
            }
            json.key("announced")
            json.bool(state.readActivity(absent: false) { $0.silenceAnnounced })
            json.endObject()
        }
        json.endObject()
        return json.takeOutput()
    }
}

extension DeviceStatusCard {
    /// RFC 3339 local time with its offset, to the second: `2026-11-21T03:34:00-05:00`.
    static func localTime(_ milliseconds: Int64, offsetSeconds: Int) -> String {
        let local = Timestamp.rfc3339(milliseconds + Int64(offsetSeconds) * 1000)
        let minutes = abs(offsetSeconds) / 60
        let hours = minutes / 60
        let sign = offsetSeconds < 0 ? "-" : "+"
        let offset = "\(sign)\(hours < 10 ? "0" : "")\(hours):\(minutes % 60 < 10 ? "0" : "")\(minutes % 60)"
        return String(local.prefix(19)) + offset
    }
}

extension Membership {
    /// The word the status card and the map use.
    public var name: String {
        switch self {
        case .undetermined: "undetermined"
        case .inside: "inside"
        case .outside: "outside"
        }
    }
}

extension JSONWriter {
    /// The card's `activity`: the trip and the speeding under way, and the device's limits.
    mutating func activity(_ activity: DeviceActivity, speedLimitInForce: Double?) {
        key("activity")
        beginObject()
        key("trip")
        if let trip = activity.trip {
            beginObject()
            key("start")
            fix(trip.start)
            key("lastMove")
            fix(trip.lastMove)
            key("distanceMeters")
            number((trip.distanceMeters * 10).rounded() / 10)
            key("topSpeedMetersPerSecond")
            number((trip.topSpeed * 100).rounded() / 100)
            key("announced")
            bool(trip.announced)
            endObject()
        } else {
            null()
        }
        key("speeding")
        if let speeding = activity.speeding {
            beginObject()
            key("since")
            timestamp(speeding.since)
            key("topSpeedMetersPerSecond")
            number((speeding.topSpeed * 100).rounded() / 100)
            key("announced")
            bool(speeding.announced)
            endObject()
        } else {
            null()
        }
        key("limits")
        beginObject()
        key("speedLimit")
        if let limit = activity.speedLimit { number(limit) } else { null() }
        key("silenceSeconds")
        if let seconds = activity.silentAfterSeconds { number(Double(seconds)) } else { null() }
        key("speedLimitInForce")
        if let limit = speedLimitInForce { number(limit) } else { null() }
        endObject()
        endObject()
    }

    /// One pin on the status card or the map: its definition (polygons whole, as GeoJSON), the state
    /// announced and since when, the time inside so far by message time, and its dwell and approach; a catalog
    /// geofence's `tags` after them.
    mutating func pinStatus(_ tracked: TrackedPin, lastFix: Fix?, catalogTags: [String]? = nil) {
        beginObject()
        key("pin")
        pinDefinition(tracked.pin)
        member("state", tracked.membership.name)
        key("since")
        if let since = tracked.since { timestamp(since) } else { null() }
        if tracked.membership == .inside, let since = tracked.since, let lastFix {
            key("insideSeconds")
            number(Double(max(0, lastFix.timestamp - since) / 1000))
        }
        if let dwell = tracked.pin.dwellSeconds {
            key("dwell")
            beginObject()
            key("seconds")
            number(Double(dwell))
            key("announced")
            bool(tracked.dwellAnnounced)
            endObject()
        }
        if let approach = tracked.pin.approachSeconds {
            key("approach")
            beginObject()
            key("seconds")
            number(Double(approach))
            key("inProgress")
            bool(tracked.approachAnnounced && tracked.membership != .inside)
            if let arrival = tracked.approachArrival, tracked.membership != .inside {
                key("expectedAt")
                timestamp(arrival)
                if let lastFix {
                    key("etaSeconds")
                    number(Double(max(0, arrival - lastFix.timestamp) / 1000))
                }
            }
            endObject()
        }
        if let catalogTags { tags(catalogTags) }
        endObject()
    }
}
