/// At most `maxRequestsPerSecond` asks of the provider: each ask starts at least `1 / maxRequestsPerSecond` after
/// the one before it (Nominatim's public servers allow one a second).
///
/// Pure: the caller asks when the next may start and says when one did.
public struct RequestPacing: Sendable, Equatable {
    /// The least time between two asks' starts.
    public let interval: Duration
    private var lastStart: ContinuousClock.Instant?

    /// - Parameter maxRequestsPerSecond: more than 0. Default: 1.
    public init(maxRequestsPerSecond: Double = 1) {
        precondition(maxRequestsPerSecond > 0, "a rate above 0")
        interval = .nanoseconds(Int64((1e9 / maxRequestsPerSecond).rounded(.up)))
    }

    /// The earliest time the next ask may start (`now` or later).
    public func nextStart(after now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        guard let lastStart else { return now }
        return max(now, lastStart + interval)
    }

    /// An ask started.
    public mutating func noteStart(at now: ContinuousClock.Instant) {
        lastStart = now
    }
}
