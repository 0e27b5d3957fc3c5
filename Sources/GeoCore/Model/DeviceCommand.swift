/// What a device asks of its tracked pins, as the commands topic carries it.
public enum DeviceCommand: Hashable, Sendable {
    /// Watch `pin` (replacing a pin with the same id).
    case track(deviceId: String, pin: Pin)
    /// Stop watching the pin with this id (no exit event).
    case untrack(deviceId: String, pinId: String)
    /// Stop watching every pin (no exit events).
    case untrackAll(deviceId: String)

    public var deviceId: String {
        switch self {
        case .track(let deviceId, _), .untrack(let deviceId, _), .untrackAll(let deviceId): deviceId
        }
    }
}
