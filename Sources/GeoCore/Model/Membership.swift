/// Where a device was last announced to be relative to a pin.
///
/// Persisted, so a restart never announces the same state twice.
public enum Membership: UInt8, Hashable, Sendable {
    /// No fix has decided it yet (none since the pin was tracked, or none accurate enough).
    case undetermined = 0
    case inside = 1
    case outside = 2
}
