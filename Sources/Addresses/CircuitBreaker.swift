/// Whether the address provider is asked at all: after `threshold` failures in a row it is left alone for
/// `coolDown` (open), then asked once (half-open); that ask's success closes the breaker, its failure opens it again.
///
/// Pure: the caller says when it asks and how each ask ended, with the time.
public struct CircuitBreaker: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        /// Asking as usual.
        case closed
        /// Not asking until the cool-down has passed.
        case open
        /// One trial ask in flight; the others wait for its answer.
        case halfOpen = "half-open"
    }

    public let threshold: Int
    public let coolDown: Duration
    public private(set) var state = State.closed
    /// Failures in a row while closed.
    public private(set) var failures = 0
    private var openedAt: ContinuousClock.Instant?

    /// - Parameters:
    ///   - threshold: failures in a row that open the breaker. Default: 5.
    ///   - coolDown: how long it stays open before a trial. Default: 30 s.
    public init(threshold: Int = 5, coolDown: Duration = .seconds(30)) {
        precondition(threshold > 0, "a breaker opens after at least one failure")
        self.threshold = threshold
        self.coolDown = coolDown
    }

    /// Whether an ask may start now; an open breaker whose cool-down has passed lets one trial through.
    public mutating func allowsAsk(at now: ContinuousClock.Instant) -> Bool {
        switch state {
        case .closed: return true
        case .open:
            guard let openedAt, now - openedAt >= coolDown else { return false }
            state = .halfOpen
            return true
        case .halfOpen:
            return false
        }
    }

    /// When an open breaker next lets a trial through (nil when it is not open).
    public var reopensAt: ContinuousClock.Instant? {
        state == .open ? openedAt.map { $0 + coolDown } : nil
    }

    /// An ask answered (an address, or none at the point): the provider works.
    public mutating func recordSuccess() {
        state = .closed
        failures = 0
        openedAt = nil
    }

    /// An ask that failed (an HTTP error, a timeout, an answer that does not read).
    public mutating func recordFailure(at now: ContinuousClock.Instant) {
        switch state {
        case .closed:
            failures += 1
            if failures >= threshold { open(at: now) }
        case .halfOpen:
            open(at: now)
        case .open:
            break  // an ask started before the breaker opened
        }
    }

    private mutating func open(at now: ContinuousClock.Instant) {
        state = .open
        openedAt = now
    }
}
