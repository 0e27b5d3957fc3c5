import Kafka
import Metrics

/// The worker's metrics, through swift-metrics (the executable bootstraps Prometheus).
///
/// The hot path only bumps plain integers in ``ProcessingCounters``; ``publish(_:)`` turns their growth into
/// metric increments once per polled batch, so a message costs no metric call of its own.
struct WorkerMetrics {
    /// The metric names, as they appear on `/metrics`.
    enum Name {
        static let positions = "geoworker_positions_consumed_total"
        static let commands = "geoworker_commands_consumed_total"
        static let events = "geoworker_events_produced_total"
        static let deadLettered = "geoworker_dead_lettered_total"
        static let stale = "geoworker_stale_positions_total"
        static let duplicates = "geoworker_duplicate_positions_total"
        static let keyNotDeviceId = "geoworker_key_not_device_id_total"
        static let alreadyApplied = "geoworker_already_applied_total"
        static let batchDuration = "geoworker_batch_duration_seconds"
        static let lag = "geoworker_consumer_lag"
        static let devices = "geoworker_devices"
        static let pins = "geoworker_pins"
        static let deliveryFailures = "geoworker_delivery_failures_total"
    }

    private let factory: any MetricsFactory
    private let positions: Counter
    private let commands: Counter
    private let stale: Counter
    private let duplicates: Counter
    private let keyNotDeviceId: Counter
    private let alreadyApplied: Counter
    private let batchDuration: Metrics.Timer
    private let devices: Gauge
    private let pins: Gauge
    private var events: [String: Counter] = [:]
    private var deadLettered: [String: Counter] = [:]
    private var lag: [TopicPartition: Gauge] = [:]
    private var published = ProcessingCounters()

    init(factory: any MetricsFactory) {
        self.factory = factory
        positions = Counter(label: Name.positions, factory: factory)
        commands = Counter(label: Name.commands, factory: factory)
        stale = Counter(label: Name.stale, factory: factory)
        duplicates = Counter(label: Name.duplicates, factory: factory)
        keyNotDeviceId = Counter(label: Name.keyNotDeviceId, factory: factory)
        alreadyApplied = Counter(label: Name.alreadyApplied, factory: factory)
        batchDuration = Metrics.Timer(label: Name.batchDuration, factory: factory)
        devices = Gauge(label: Name.devices, factory: factory)
        pins = Gauge(label: Name.pins, factory: factory)
    }

    /// Adds what `counters` gained since the last call.
    mutating func publish(_ counters: ProcessingCounters) {
        guard counters != published else { return }
        positions.increment(by: counters.positions - published.positions)
        commands.increment(by: counters.commands - published.commands)
        stale.increment(by: counters.stalePositions - published.stalePositions)
        duplicates.increment(by: counters.duplicatePositions - published.duplicatePositions)
        keyNotDeviceId.increment(by: counters.keyNotDeviceId - published.keyNotDeviceId)
        alreadyApplied.increment(by: counters.alreadyApplied - published.alreadyApplied)
        for (type, count) in counters.events where count != published.events[type] {
            Self.counter(in: &events, Name.events, factory: factory, label: "type", value: type)
                .increment(by: count - published.events[type, default: 0])
        }
        for (reason, count) in counters.deadLettered where count != published.deadLettered[reason] {
            Self.counter(in: &deadLettered, Name.deadLettered, factory: factory, label: "reason", value: reason)
                .increment(by: count - published.deadLettered[reason, default: 0])
        }
        published = counters
    }

    /// How long one polled batch took from the poll's return to its records being handed to the producer
    /// (merged on the loop, applied on the shards' threads).
    func recordBatch(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        batchDuration.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Counts records the broker refused, by topic and librdkafka error name.
    func recordDeliveryFailures(_ counts: [String: [String: Int]]) {
        for (topic, errors) in counts {
            for (error, count) in errors {
                Counter(
                    label: Name.deliveryFailures,
                    dimensions: [("topic", topic), ("error", error)],
                    factory: factory
                )
                .increment(by: count)
            }
        }
    }

    /// Records how many devices and tracked pins the worker holds.
    func recordHoldings(_ holdings: (devices: Int, pins: Int)) {
        devices.record(holdings.devices)
        pins.record(holdings.pins)
    }

    /// Sets the lag of each partition: its high watermark minus the next offset persisted for it, what a
    /// restart would still have to read (partitions with nothing persisted yet are left out until their
    /// first checkpoint).
    mutating func recordLag(highWatermarks: [TopicPartition: Int64], storedOffsets: [TopicPartition: Int64]) {
        for (partition, high) in highWatermarks {
            guard let next = storedOffsets[partition] else { continue }
            let value = max(0, high - next)
            if lag[partition] == nil {
                lag[partition] = Gauge(
                    label: Name.lag,
                    dimensions: [("topic", partition.topic), ("partition", "\(partition.partition)")],
                    factory: factory
                )
            }
            lag[partition]!.record(value)
        }
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
