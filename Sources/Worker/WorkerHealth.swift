import Synchronization

/// Where the worker is in its life, for the `/health` and `/ready` probes. Written by the worker's thread,
/// read by the HTTP server's.
public final class WorkerHealth: Sendable {
    public enum Phase: Int, Sendable {
        /// Loading state, connecting, checking the topics.
        case starting
        /// Consuming: the topics were found co-partitioned and the loop runs.
        case running
        /// Finishing the batch in flight and the last checkpoint after a stop request.
        case stopping
        /// Stopped after the last checkpoint.
        case stopped
        /// Stopped by an error (see the logs).
        case failed
    }

    private let current = Atomic<Int>(Phase.starting.rawValue)

    public init() {}

    public var phase: Phase { Phase(rawValue: current.load(ordering: .acquiring)) ?? .failed }

    /// Alive: anything but failed. A broker outage keeps the worker alive (it waits, then resumes), so a
    /// liveness probe must not restart it for that.
    public var isHealthy: Bool { phase != .failed }

    /// Ready: consuming. Starting, stopping and stopped instances take no part.
    public var isReady: Bool { phase == .running }

    func enter(_ phase: Phase) {
        current.store(phase.rawValue, ordering: .releasing)
    }
}
