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
