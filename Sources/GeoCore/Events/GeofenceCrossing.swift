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
