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
