import Foundation
import Kafka
import Metrics
import PartitionOffsets

/// What the checkpoints tell an operator: how far each partition's stored progress is behind its end, how
/// many devices and pins the worker holds, and when the store last held everything applied.
struct CheckpointMetrics {
    private let factory: any MetricsFactory
    private let devices: Gauge
    private let pins: Gauge
    private let upToDate: Gauge
    private var lag: [TopicPartition: Gauge] = [:]

    init(factory: any MetricsFactory) {
        self.factory = factory
        devices = Gauge(label: MetricName.devices, factory: factory)
        pins = Gauge(label: MetricName.pins, factory: factory)
        upToDate = Gauge(label: MetricName.checkpointUpToDate, factory: factory)
    }

    /// Notes that the store holds everything applied until now.
    ///
    /// A checkpoint was written, or there was nothing to write. An operator alerts on its age: a checkpoint stuck on
    /// deliveries or on the disk stops it.
    func recordUpToDate() {
        upToDate.record(Date().timeIntervalSince1970)
    }

    /// Records how many devices and tracked pins the worker holds.
    func recordHoldings(_ holdings: (devices: Int, pins: Int)) {
        devices.record(holdings.devices)
        pins.record(holdings.pins)
    }

    /// Sets the lag of each partition: its high watermark minus the next offset applied, what the worker has still to
    /// apply (partitions with nothing applied yet are left out).
    ///
    /// Not what a restart would read again, which reaches back to the last complete checkpoint (at most the store
    /// interval): a lag that rose and fell with every stored checkpoint would say nothing of keeping up.
    mutating func recordLag(highWatermarks: [TopicPartition: Int64], applied: [TopicPartition: Int64]) {
        for (partition, high) in highWatermarks {
            guard let next = applied[partition] else { continue }
            if lag[partition] == nil {
                lag[partition] = Gauge(
                    label: MetricName.lag,
                    dimensions: [("topic", partition.topic), ("partition", "\(partition.partition)")],
                    factory: factory
                )
            }
            lag[partition]!.record(max(0, high - next))
        }
    }
}
