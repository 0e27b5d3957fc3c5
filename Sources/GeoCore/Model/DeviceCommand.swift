/// What a device asks of its tracked pins and its catalog subscriptions, as the commands topic carries it.
public enum DeviceCommand: Hashable, Sendable {
    /// Watch `pin` (replacing a pin with the same id).
    case track(deviceId: String, pin: Pin)
    /// Stop watching the pin with this id (no exit event).
    case untrack(deviceId: String, pinId: String)
    /// Stop watching every pin (no exit events).
    case untrackAll(deviceId: String)
    /// Watch the fleet catalog's geofences that carry any of `tags` (sorted, each once), besides those already
    /// subscribed to.
    case subscribe(deviceId: String, tags: [String])
    /// Stop watching the catalog's geofences of `tags` (no exit events; those another subscribed tag reaches stay).
    case unsubscribe(deviceId: String, tags: [String])
    /// The device's own limits, replacing those it had: a speed limit in metres per second, and how long it may send
    /// nothing before it is announced silent, in seconds; nil: the default.
    case setLimits(deviceId: String, speedLimit: Double?, silentAfterSeconds: Int?)

    public var deviceId: String {
        switch self {
        case .track(let deviceId, _), .untrack(let deviceId, _), .untrackAll(let deviceId),
            .subscribe(let deviceId, _), .unsubscribe(let deviceId, _), .setLimits(let deviceId, _, _):
            deviceId
        }
    }

    /// The speed limits a `setLimits` command may set, in metres per second (up to 720 km/h).
    public static let speedLimitRange: ClosedRange<Double> = 0.1...200
    /// The silence thresholds a `setLimits` command may set, in seconds: a minute to 30 days.
    public static let silenceRange: ClosedRange<Int> = 60...2_592_000
}
