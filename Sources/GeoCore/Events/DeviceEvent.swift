/// Something that happened to a device, to be published on the events topic.
public struct DeviceEvent: Hashable, Sendable {
    /// Deterministic: derived from the message that caused it (see ``MessageOrigin/eventId(_:)``).
    public let id: String
    public let deviceId: String
    /// When it happened, in milliseconds since the epoch: the position's time, or for commands the
    /// command message's Kafka timestamp.
    public let time: Int64
    public let payload: Payload
    /// For a geofence event of a geofence of the fleet's catalog: its tags (events name it as such); nil for a tracked
    /// pin's and for every other event.
    public internal(set) var catalogTags: [String]?

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
        indirect case tripStarted(TripStart)
        indirect case tripEnded(TripEnd)
        indirect case speedExceeded(SpeedReport)
        indirect case speedNormal(SpeedReport)
        indirect case deviceSilent(DeviceSilence)
        indirect case deviceResumed(DeviceResumption)
    }

    public init(id: String, deviceId: String, time: Int64, payload: Payload, catalogTags: [String]? = nil) {
        self.id = id
        self.deviceId = deviceId
        self.time = time
        self.payload = payload
        self.catalogTags = catalogTags
    }

    /// The CloudEvents `type`.
    public var type: String { Self.types[typeNumber] }

    /// Every CloudEvents `type` an event may have, each at its ``typeNumber``.
    public static let types = [
        "geofence.entered", "geofence.exited", "country.changed", "language.suggested", "geofence.dwelled",
        "geofence.crossed", "geofence.approaching", "region.changed", "timezone.changed", "trip.started",
        "trip.ended", "speed.exceeded", "speed.normal", "device.silent", "device.resumed",
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
        case .tripStarted: 9
        case .tripEnded: 10
        case .speedExceeded: 11
        case .speedNormal: 12
        case .deviceSilent: 13
        case .deviceResumed: 14
        }
    }
}
