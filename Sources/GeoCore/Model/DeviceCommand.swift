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

    public var deviceId: String {
        switch self {
        case .track(let deviceId, _), .untrack(let deviceId, _), .untrackAll(let deviceId),
            .subscribe(let deviceId, _), .unsubscribe(let deviceId, _):
            deviceId
        }
    }
}
