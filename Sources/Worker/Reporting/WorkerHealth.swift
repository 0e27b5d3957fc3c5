import Synchronization

/// Where the worker is in its life, for the `/health` and `/ready` probes.
///
/// Written by the worker's thread, read by the HTTP server's.
public final class WorkerHealth: Sendable {
    public enum Phase: Int, Sendable {
        /// Loading state, connecting, checking the topics.
        case starting
        /// Consuming: the topics were found co-partitioned and the loop runs.
        case running
        /// Restoring newly assigned partitions from the changelog before reading their input: healthy, not
        /// ready.
        case restoring
        /// The broker refused a delivery: rewound to the last checkpoint, waiting before retrying (see
        /// ``WorkerHealth/reason``). Not healthy, and not ready, until deliveries go through again.
        case backingOff
        /// Finishing the batch in flight and the last checkpoint after a stop request.
        case stopping
        /// Stopped after the last checkpoint.
        case stopped
        /// Stopped by an error (see the logs).
        case failed
    }

    private let current = Atomic<Int>(Phase.starting.rawValue)
    private let why = Mutex<String?>(nil)

    public init() {}

    public var phase: Phase { Phase(rawValue: current.load(ordering: .acquiring)) ?? .failed }

    /// Why the worker is not healthy (a refused delivery, a failure), in words; nil when it is.
    public var reason: String? { why.withLock { $0 } }

    /// Healthy: neither failed nor backing off from a refused delivery.
    ///
    /// A broker outage keeps the worker healthy (deliveries wait, then resume), so a liveness probe must not restart it
    /// for that.
    public var isHealthy: Bool { phase != .failed && phase != .backingOff }

    /// Ready: consuming.
    ///
    /// Starting, stopping and stopped instances take no part.
    public var isReady: Bool { phase == .running }

    func enter(_ phase: Phase, reason: String? = nil) {
        why.withLock { $0 = reason }
        current.store(phase.rawValue, ordering: .releasing)
    }
}
