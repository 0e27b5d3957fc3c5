/// A device that set off: its movement since `start` became a trip at `position`.
public struct TripStart: Hashable, Sendable {
    /// The last fix at the place it left: where and when the trip began.
    public let start: Fix
    /// The fix that made the movement a trip (its distance or its duration reached).
    public let position: Fix
    /// The path from `start` to `position`, in metres.
    public let distanceMeters: Double

    public init(start: Fix, position: Fix, distanceMeters: Double) {
        self.start = start
        self.position = position
        self.distanceMeters = distanceMeters
    }
}

/// A trip that ended: the device stood still long enough, or its fixes stopped for too long.
public struct TripEnd: Hashable, Sendable {
    public enum Reason: String, Hashable, Sendable {
        /// It stood still for ``TripRules/minimumParkingSeconds``.
        case parked
        /// No fix came for longer than ``TripRules/maximumGapSeconds``.
        case gap
    }

    /// Where and when the trip began.
    public let start: Fix
    /// Where and when it ended: its last fix that moved on.
    public let end: Fix
    /// The path through its moving fixes, in metres.
    public let distanceMeters: Double
    /// From `start` to `end`, in seconds.
    public let durationSeconds: Double
    /// The highest speed of its fixes (reported, else derived), in metres per second.
    public let topSpeedMetersPerSecond: Double
    public let reason: Reason
    /// The fix that decided the end (the one after the parking time, or after the gap).
    public let position: Fix

    public init(
        start: Fix,
        end: Fix,
        distanceMeters: Double,
        topSpeedMetersPerSecond: Double,
        reason: Reason,
        position: Fix
    ) {
        self.start = start
        self.end = end
        self.distanceMeters = distanceMeters
        durationSeconds = Double(end.timestamp - start.timestamp) / 1000
        self.topSpeedMetersPerSecond = topSpeedMetersPerSecond
        self.reason = reason
        self.position = position
    }
}

/// A device above its speed limit for the minimum duration (`speed.exceeded`), or back at or under it after that
/// (`speed.normal`).
public struct SpeedReport: Hashable, Sendable {
    /// The device's limit, in metres per second.
    public let limitMetersPerSecond: Double
    /// The speed at `position`, in metres per second.
    public let speedMetersPerSecond: Double
    public let basis: GeofenceApproach.Basis
    /// The highest speed of the episode so far, in metres per second.
    public let topSpeedMetersPerSecond: Double
    /// The time of the episode's first fix above the limit.
    public let since: Int64
    public let position: Fix

    public init(
        limitMetersPerSecond: Double,
        speedMetersPerSecond: Double,
        basis: GeofenceApproach.Basis,
        topSpeedMetersPerSecond: Double,
        since: Int64,
        position: Fix
    ) {
        self.limitMetersPerSecond = limitMetersPerSecond
        self.speedMetersPerSecond = speedMetersPerSecond
        self.basis = basis
        self.topSpeedMetersPerSecond = topSpeedMetersPerSecond
        self.since = since
        self.position = position
    }

    /// From the episode's first fix above the limit to `position`, in seconds.
    public var durationSeconds: Double { Double(position.timestamp - since) / 1000 }
}
