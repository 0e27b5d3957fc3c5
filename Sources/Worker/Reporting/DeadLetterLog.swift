import Logging

/// Dead letters in the log, where an operator looks first (the metric and the topic say how many and which, but only
/// to someone who knows to look there).
///
/// At most one line every ``interval`` of real time, the first at once: how many went since the last line, by reason,
/// and the latest one's reason, error and origin, so that a flood of bad input costs a line every few seconds, not a
/// line a message.
struct DeadLetterLog {
    static let interval = Duration.seconds(10)
    private var logged: [String: Int] = [:]
    private var loggedAt: ContinuousClock.Instant?

    /// Logs the dead letters `counters` has counted since the last line, unless one was written within ``interval``
    /// (and `whateverTheInterval` is false: a stop logs what is left).
    mutating func note(
        _ counters: ProcessingCounters,
        logger: Logger,
        whateverTheInterval: Bool = false,
        now: ContinuousClock.Instant = .now
    ) {
        guard counters.deadLettered != logged else { return }
        if !whateverTheInterval, let loggedAt, now - loggedAt < Self.interval { return }
        let since = counters.deadLettered.compactMap { reason, count -> (String, Int)? in
            let new = count - logged[reason, default: 0]
            return new > 0 ? (reason, new) : nil
        }
        var metadata: Logger.Metadata = [
            ServiceLogKey.deadLettered: "\(since.reduce(0) { $0 + $1.1 })",
            ServiceLogKey.reasons: "\(since.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: ","))",
        ]
        if let latest = counters.latestDeadLetter {
            metadata[ServiceLogKey.origin] = "\(latest.origin)"
            metadata[ServiceLogKey.reason] = "\(latest.reason)"
            metadata[ServiceLogKey.error] = "\(latest.error)"
        }
        logger.warning(
            "messages sent to the dead-letter topic (the latest's reason, error and origin)",
            metadata: metadata
        )
        logged = counters.deadLettered
        loggedAt = now
    }
}
