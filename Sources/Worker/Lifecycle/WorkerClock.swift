import Foundation

/// The worker's sense of time: checkpoints fall due, merges stop waiting for a side and back-offs end by it.
///
/// The system's clock in service; a clock a test moves by hand, so that a test of a checkpoint or a back-off waits for
/// an event rather than for time to pass.
public protocol WorkerClock: Sendable {
    /// Now, on the monotonic clock.
    var now: ContinuousClock.Instant { get }
    /// Blocks the calling thread until `deadline` on this clock, or until `stop` is asked for, whichever comes first
    /// (the loop's waits: a back-off).
    func sleep(until deadline: ContinuousClock.Instant, unless stop: StopRequest)
}

extension WorkerClock {
    /// The wall clock, in milliseconds since the epoch: what stands in for a partition's stream time when it
    /// receives nothing (``StreamClock``).
    public var wallMilliseconds: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// The monotonic system clock.
public struct SystemClock: WorkerClock {
    public init() {}

    public var now: ContinuousClock.Instant { .now }

    public func sleep(until deadline: ContinuousClock.Instant, unless stop: StopRequest) {
        // In slices of at most a second: a wait's timeout is on the wall clock, which may be set back meanwhile (a
        // back-off must not outlast the group's poll interval for that); the deadline is on the monotonic one.
        while !stop.isAsked {
            let remaining = deadline - .now
            guard remaining > .zero else { return }
            stop.wait(upTo: min(remaining, .seconds(1)))
        }
    }
}
