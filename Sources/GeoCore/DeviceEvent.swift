/// Something that happened to a device, to be published on the events topic.
public struct DeviceEvent: Hashable, Sendable {
    /// Deterministic: derived from the message that caused it (see ``MessageOrigin/eventID(_:)``).
    public let id: String
    public let deviceId: String
    /// When it happened, in milliseconds since the epoch: the position's time, or for commands the
    /// command message's Kafka timestamp.
    public let time: Int64
    public let payload: Payload

    public enum Payload: Hashable, Sendable {
        case geofenceEntered(GeofenceCrossing)
        case geofenceExited(GeofenceCrossing)
        case countryChanged(CountryChange)
        case languageSuggested(LanguageSuggestion)
    }

    public init(id: String, deviceId: String, time: Int64, payload: Payload) {
        self.id = id
        self.deviceId = deviceId
        self.time = time
        self.payload = payload
    }

    /// The CloudEvents `type`.
    public var type: String {
        switch payload {
        case .geofenceEntered: "geofence.entered"
        case .geofenceExited: "geofence.exited"
        case .countryChanged: "country.changed"
        case .languageSuggested: "language.suggested"
        }
    }
}

/// A device entering or leaving a pin.
public struct GeofenceCrossing: Hashable, Sendable {
    public let pin: Pin
    public let position: Fix
    /// From the position to the pin's centre, in metres.
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

/// A device arriving in a country.
public struct CountryChange: Hashable, Sendable {
    /// The previous country (ISO 3166-1 alpha-2), nil for the first fix.
    public let from: String?
    public let to: String
    /// The English name of `to`.
    public let countryName: String
    public let position: Fix

    public init(from: String?, to: String, countryName: String, position: Fix) {
        self.from = from
        self.to = to
        self.countryName = countryName
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
