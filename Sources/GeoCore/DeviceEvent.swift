/// Something that happened to a device, to be published on the events topic.
public struct DeviceEvent: Hashable, Sendable {
    /// Deterministic: derived from the message that caused it (see ``MessageOrigin/eventID(_:)``).
    public let id: String
    public let deviceId: String
    /// When it happened, in milliseconds since the epoch: the position's time, or for commands the
    /// command message's Kafka timestamp.
    public let time: Int64
    public let payload: Payload

    /// The rare kinds with large payloads are boxed (`indirect`): a payload is as large as its largest kind, and
    /// the geofence events that make most of the traffic were copied at twice their size once places were in.
    public enum Payload: Hashable, Sendable {
        case geofenceEntered(GeofenceCrossing)
        case geofenceExited(GeofenceCrossing)
        indirect case countryChanged(CountryChange)
        case languageSuggested(LanguageSuggestion)
        case geofenceDwelled(GeofenceDwell)
        case geofenceCrossed(GeofencePassage)
        case geofenceApproaching(GeofenceApproach)
        indirect case regionChanged(RegionChange)
        indirect case timeZoneChanged(TimeZoneChange)
    }

    public init(id: String, deviceId: String, time: Int64, payload: Payload) {
        self.id = id
        self.deviceId = deviceId
        self.time = time
        self.payload = payload
    }

    /// The CloudEvents `type`.
    public var type: String { Self.types[typeNumber] }

    /// Every CloudEvents `type` an event may have, each at its ``typeNumber``.
    public static let types = [
        "geofence.entered", "geofence.exited", "country.changed", "language.suggested", "geofence.dwelled",
        "geofence.crossed", "geofence.approaching", "region.changed", "timezone.changed",
    ]

    /// The position of the event's `type` in ``types``: what counts events by type without hashing the name.
    public var typeNumber: Int {
        switch payload {
        case .geofenceEntered: 0
        case .geofenceExited: 1
        case .countryChanged: 2
        case .languageSuggested: 3
        case .geofenceDwelled: 4
        case .geofenceCrossed: 5
        case .geofenceApproaching: 6
        case .regionChanged: 7
        case .timeZoneChanged: 8
        }
    }
}

/// A device entering or leaving a pin.
public struct GeofenceCrossing: Hashable, Sendable {
    public let pin: Pin
    public let position: Fix
    /// In metres: from the position to a circle's centre, or to a polygon's nearest edge.
    public let distanceMeters: Double
    /// True when this is the first decision about the pin since it was tracked (the initial-state
    /// check), rather than a crossing seen happen.
    public let initial: Bool

    public init(pin: Pin, position: Fix, distanceMeters: Double, initial: Bool) {
        self.pin = pin
        self.position = position
        self.distanceMeters = distanceMeters
        self.initial = initial
    }
}

/// A device that has stayed inside a pin for the pin's dwell time.
public struct GeofenceDwell: Hashable, Sendable {
    public let pin: Pin
    /// The first fix at or after the threshold.
    public let position: Fix
    /// When the visit began: the time of the fix that decided the device inside.
    public let insideSince: Int64
    /// How long the device has been inside at `position`, in seconds (at least the pin's `dwellSeconds`).
    public let dwellSeconds: Double

    public init(pin: Pin, position: Fix, insideSince: Int64, dwellSeconds: Double) {
        self.pin = pin
        self.position = position
        self.insideSince = insideSince
        self.dwellSeconds = dwellSeconds
    }
}

/// A device that passed through a pin between two fixes that both found it outside.
public struct GeofencePassage: Hashable, Sendable {
    public let pin: Pin
    /// The fix before the passage.
    public let from: Fix
    /// The fix after it.
    public let to: Fix

    public init(pin: Pin, from: Fix, to: Fix) {
        self.pin = pin
        self.from = from
        self.to = to
    }
}

/// A device heading towards a pin, close enough in time to arrive within the pin's `approachSeconds`.
public struct GeofenceApproach: Hashable, Sendable {
    /// Where the speed came from.
    public enum Basis: String, Hashable, Sendable {
        /// The position's own `speed`.
        case reportedSpeed = "reported-speed"
        /// The distance and time between the device's last two fixes.
        case derivedSpeed = "derived-speed"
    }

    public let pin: Pin
    public let position: Fix
    /// The straight-line time to the pin's edge at `speedMetersPerSecond`.
    public let etaSeconds: Double
    /// From the position to the nearest point of the pin's edge, in metres.
    public let distanceMeters: Double
    public let speedMetersPerSecond: Double
    public let basis: Basis

    public init(
        pin: Pin,
        position: Fix,
        etaSeconds: Double,
        distanceMeters: Double,
        speedMetersPerSecond: Double,
        basis: Basis
    ) {
        self.pin = pin
        self.position = position
        self.etaSeconds = etaSeconds
        self.distanceMeters = distanceMeters
        self.speedMetersPerSecond = speedMetersPerSecond
        self.basis = basis
    }
}

/// A device arriving in a country.
public struct CountryChange: Hashable, Sendable {
    /// The previous country (ISO 3166-1 alpha-2), nil for the first fix.
    public let from: String?
    public let to: String
    /// The English name of `to`.
    public let countryName: String
    public let position: Fix
    /// With places: the region of the fix that decided the change (nil where none is known, or without places).
    public let region: PlaceRegion?
    /// With places: the populated place nearest that fix.
    public let locality: Locality?

    public init(
        from: String?,
        to: String,
        countryName: String,
        position: Fix,
        region: PlaceRegion? = nil,
        locality: Locality? = nil
    ) {
        self.from = from
        self.to = to
        self.countryName = countryName
        self.position = position
        self.region = region
        self.locality = locality
    }
}

extension CountryChange {
    /// The same change with the region and locality of its fix.
    func described(region: PlaceRegion?, locality: Locality?) -> CountryChange {
        CountryChange(
            from: from,
            to: to,
            countryName: countryName,
            position: position,
            region: region,
            locality: locality
        )
    }
}

/// A device arriving in another region (an ISO 3166-2 subdivision) of its country, or in a country where no
/// region is known (`to` nil).
public struct RegionChange: Hashable, Sendable {
    /// The region last announced, nil for the first.
    public let from: PlaceRegion?
    public let to: PlaceRegion?
    /// The device's country (ISO 3166-1 alpha-2) at the change.
    public let countryCode: String?
    public let position: Fix

    public init(from: PlaceRegion?, to: PlaceRegion?, countryCode: String?, position: Fix) {
        self.from = from
        self.to = to
        self.countryCode = countryCode
        self.position = position
    }
}

/// A device arriving in another time zone: each side with its offset from UTC at the fix's time, so that a
/// consumer can tell a change of clock from a change of name.
public struct TimeZoneChange: Hashable, Sendable {
    /// An IANA time zone and its offset from UTC (seconds, daylight saving time included) at the change.
    public struct Zone: Hashable, Sendable {
        public let identifier: String
        public let utcOffsetSeconds: Int?

        public init(identifier: String, utcOffsetSeconds: Int?) {
            self.identifier = identifier
            self.utcOffsetSeconds = utcOffsetSeconds
        }
    }

    /// The zone last announced, nil for the first.
    public let from: Zone?
    public let to: Zone
    public let position: Fix

    public init(from: Zone?, to: Zone, position: Fix) {
        self.from = from
        self.to = to
        self.position = position
    }
}

/// The language to offer a device's user in a country.
public struct LanguageSuggestion: Hashable, Sendable {
    /// Why this language was chosen.
    public enum Basis: String, Hashable, Sendable {
        /// One of the device's languages is official in the country.
        case deviceLanguage = "device-language"
        /// The country's main official language.
        case officialLanguage = "official-language"
        /// No official-language data: the likely language for the region (ICU likely subtags).
        case likelySubtags = "likely-subtags"
    }

    public let countryCode: String
    /// A BCP 47 tag with region, such as `fr-CH`.
    public let language: String
    /// Other languages of the country worth offering, most spoken first.
    public let alternatives: [String]
    public let basis: Basis

    public init(countryCode: String, language: String, alternatives: [String], basis: Basis) {
        self.countryCode = countryCode
        self.language = language
        self.alternatives = alternatives
        self.basis = basis
    }
}
