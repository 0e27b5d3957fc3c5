import Foundation

/// The worker's sense of time: checkpoints fall due, merges stop waiting for a side and back-offs end by it.
///
/// The system's clock in service; a clock a test moves by hand, so that a test of a checkpoint or a back-off waits for
/// an event rather than for time to pass.
public protocol WorkerClock: Sendable {
    /// Now, on the monotonic clock.
    var now: ContinuousClock.Instant { get }
    /// Blocks the calling thread for `duration` (the loop's waits: a back-off).
    func sleep(for duration: Duration)
}

/// The monotonic system clock.
public struct SystemClock: WorkerClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public func sleep(for duration: Duration) {
        guard duration > .zero else { return }
        let (seconds, attoseconds) = duration.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
    }
}
