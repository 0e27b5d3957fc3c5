import Metrics

/// The loop's metrics of what was processed, through swift-metrics (the executable bootstraps Prometheus);
/// the checkpoint's are ``CheckpointMetrics``.
///
/// The hot path only bumps plain integers in ``ProcessingCounters``; ``publish(_:)`` turns their growth into
/// metric increments at checkpoints, and ``publishBetweenPolls(_:)`` between polls where the loop finds the
/// shards still, so a message costs no metric call of its own.
struct WorkerMetrics {
    private let factory: any MetricsFactory
    private let positions: Counter
    private let commands: Counter
    private let stale: Counter
    private let duplicates: Counter
    private let keyNotDeviceId: Counter
    private let silencesByWallClock: Counter
    private let alreadyApplied: Counter
    private let batchDuration: Metrics.Timer
    private let laggingWaitsGivenUp: Counter
    private var laggingWaitsCounted = 0
    private var events: [String: Counter] = [:]
    private var deadLettered: [String: Counter] = [:]
    private var published = ProcessingCounters()
    private var publishedAt: ContinuousClock.Instant?
    /// How often the counters are gathered between polls: gathering them takes the tally's lock and builds
    /// dictionaries, and a steady stream has hundreds of idle turns a second where a scrape comes every few seconds.
    static let publishingInterval = Duration.milliseconds(100)

    init(factory: any MetricsFactory) {
        self.factory = factory
        positions = Counter(label: MetricName.positions, factory: factory)
        commands = Counter(label: MetricName.commands, factory: factory)
        stale = Counter(label: MetricName.stale, factory: factory)
        duplicates = Counter(label: MetricName.duplicates, factory: factory)
        keyNotDeviceId = Counter(label: MetricName.keyNotDeviceId, factory: factory)
        silencesByWallClock = Counter(label: MetricName.silencesByWallClock, factory: factory)
        alreadyApplied = Counter(label: MetricName.alreadyApplied, factory: factory)
        batchDuration = Metrics.Timer(label: MetricName.batchDuration, factory: factory)
        laggingWaitsGivenUp = Counter(label: MetricName.mergeLaggingWaitsGivenUp, factory: factory)
    }

    /// ``publish(_:)`` between polls, at most once a ``publishingInterval`` of real time (a cost bound, not a
    /// schedule: the worker's clock, which tests drive, does not pace it).
    mutating func publishBetweenPolls(_ counters: @autoclosure () -> ProcessingCounters) {
        let now = ContinuousClock.now
        if let publishedAt, now - publishedAt < Self.publishingInterval { return }
        publish(counters())
        publishedAt = now
    }

    /// Adds what `counters` gained since the last call.
    mutating func publish(_ counters: ProcessingCounters) {
        guard counters != published else { return }
        positions.increment(by: counters.positions - published.positions)
        commands.increment(by: counters.commands - published.commands)
        stale.increment(by: counters.stalePositions - published.stalePositions)
        duplicates.increment(by: counters.duplicatePositions - published.duplicatePositions)
        keyNotDeviceId.increment(by: counters.keyNotDeviceId - published.keyNotDeviceId)
        silencesByWallClock.increment(by: counters.silencesByWallClock - published.silencesByWallClock)
        alreadyApplied.increment(by: counters.alreadyApplied - published.alreadyApplied)
        for (type, count) in counters.events where count != published.events[type] {
            Self.counter(in: &events, MetricName.events, factory: factory, label: "type", value: type)
                .increment(by: count - published.events[type, default: 0])
        }
        for (reason, count) in counters.deadLettered where count != published.deadLettered[reason] {
            Self.counter(in: &deadLettered, MetricName.deadLettered, factory: factory, label: "reason", value: reason)
                .increment(by: count - published.deadLettered[reason, default: 0])
        }
        published = counters
    }

    /// Counts the merge's waits for a lagging side that reached their bound, `total` since the start.
    ///
    /// - Returns: whether there were new ones (the loop warns).
    mutating func recordLaggingWaits(_ total: Int) -> Bool {
        guard total > laggingWaitsCounted else { return false }
        laggingWaitsGivenUp.increment(by: total - laggingWaitsCounted)
        laggingWaitsCounted = total
        return true
    }

    /// How long one polled batch took from the poll's return to its records being handed to the producer
    /// (merged on the loop, applied on the shards' threads).
    func recordBatch(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        batchDuration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The counter of `name` with the dimension `label=value`, made on first use.
    private static func counter(
        in counters: inout [String: Counter],
        _ name: String,
        factory: any MetricsFactory,
        label: String,
        value: String
    ) -> Counter {
        if let counter = counters[value] { return counter }
        let counter = Counter(label: name, dimensions: [(label, value)], factory: factory)
        counters[value] = counter
        return counter
    }
}
