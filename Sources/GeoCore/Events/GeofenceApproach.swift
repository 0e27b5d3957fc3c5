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
