import Logging
import Metrics

/// The one place a breach of an ``Invariant`` is logged and counted, whoever found it (the loop, a restore).
struct InvariantReporter {
    private let logger: Logger
    private let counters: [Invariant: Counter]

    init(logger: Logger, factory: any MetricsFactory) {
        self.logger = logger
        var counters: [Invariant: Counter] = [:]
        for invariant in Invariant.allCases {
            let counter = Counter(
                label: MetricName.invariantViolations,
                dimensions: [("invariant", invariant.rawValue)],
                factory: factory
            )
            // Exposed at 0 from the start, so that an alert's increase() counts the first breach.
            counter.increment(by: 0)
            counters[invariant] = counter
        }
        self.counters = counters
    }

    /// Logs (error level, with what broke it) and counts `count` breaches of `invariant`; nothing when there are none.
    ///
    /// `metadata` is an autoclosure: a check runs every round and finds nothing, and building the metadata would cost
    /// a dictionary and a string each time.
    func report(_ invariant: Invariant, count: Int, _ metadata: @autoclosure () -> Logger.Metadata) {
        guard count > 0 else { return }
        counters[invariant]?.increment(by: count)
        var metadata = metadata()
        metadata[ServiceLogKey.invariant] = "\(invariant.rawValue)"
        logger.error("invariant broken: \(count) \(invariant.breach)", metadata: metadata)
    }
}

extension InvariantReporter {
    /// Reports the breaches a check collected: the first few, for the log line, and how many.
    func report(_ invariant: Invariant, _ breaches: BreachSample<some CustomStringConvertible>) {
        report(invariant, count: breaches.count, [ServiceLogKey.records: "\(breaches.first.map(\.description))"])
    }
}

extension Invariant {
    /// What one breach is, for the log line.
    var breach: String {
        switch self {
        case .mergeOrder: "records applied after records of their pair stamped later, though known to be there"
        case .readOrder: "records read again or out of order within one assignment"
        case .restoreOrder: "changelog records of one device whose applied offsets do not order them"
        }
    }
}
