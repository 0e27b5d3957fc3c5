/// The time the lookups go by: when the pace lets the next request go, when the breaker reopens, when a card stops
/// waiting and when the prefetches are next taken.
///
/// The street addresses' own times (an answer's age and expiry) are the wall clock's, given apart: answers outlive
/// the process.
public protocol LookupClock: Sendable {
    var now: ContinuousClock.Instant { get }
    /// Returns at `deadline`, or throws `CancellationError` when the task is cancelled first.
    func sleep(until deadline: ContinuousClock.Instant) async throws
}

/// The lookups' time in a running worker: the system's monotonic clock.
public struct SystemLookupClock: LookupClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        try await Task.sleep(until: deadline, clock: .continuous)
    }
}
