import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import PartitionOffsets
import StateStore

/// Brings the local store's copy of changelog partitions up to the changelog's end, before their input is
/// read: the records another instance wrote since this store last had them (or all of them, for partitions
/// this store never had), read with a consumer outside the group and written to SQLite as they come.
///
/// Each record is checked on the way (it decodes, and names the device its key names): a record no geoworker
/// this old can read stops the restore with an error naming its partition and offset, never a device started
/// from nothing. A tombstone (null value) forgets its device. Records go to the store in transactions of
/// ``batchSize`` with the changelog offset they reach, so a restore cut short resumes where it stopped.
struct ChangelogRestore {
    let topic: String
    let store: StateStore
    /// The restore consumer's settings (the worker's brokers and `--kafka` properties; no group membership).
    let consumerConfiguration: ConsumerConfiguration
    let logger: Logger
    let metricsFactory: any MetricsFactory
    /// Whether the changelog is written in transactions (exactly-once): then each partition is read from its
    /// beginning, and the records the store already holds are passed over.
    ///
    /// A read that starts past an aborted transaction's marker is not safe on every broker: noida-db 0.2.3 still
    /// names that transaction in its answers, and librdkafka then takes the producer's every later record for part of
    /// it, up to the producer's next abort, so that the committed checkpoints of a restarted instance (the same
    /// transactional id) would silently never be restored. Apache Kafka names only the aborted transactions that
    /// reach into the read; from the beginning, every marker is read in its order on either. It costs a read of
    /// the partition's records before the store's offset: Kafka Streams restores the whole changelog after an
    /// exactly-once instance was killed, where this store keeps its own.
    var transactional = false
    /// Records per poll and per transaction.
    ///
    /// A restore inserts devices in offset order, which is random key order: larger transactions sort more keys
    /// together and touch each B-tree page fewer times, at the price of about 10 MB of records in hand.
    static let batchSize = 50_000

    /// What one restore did, per changelog partition.
    struct Report: Hashable, Sendable {
        /// Records read and stored (tombstones included).
        var records: [Int32: Int] = [:]
        /// What the records did to the states the store held: older ones replaced, newer ones kept.
        var outcome = RestoreOutcome()
        var elapsed: Duration = .zero
    }

    /// Restores each of `partitions` whose changelog partition holds records past the store's copy.
    ///
    /// - Parameters:
    ///   - partitions: the assigned input partition numbers, which are the changelog's.
    ///   - consumer: a consumer that asks the changelog partitions' low and high watermarks (the
    ///     worker's group consumer).
    /// - Returns: the partitions that were behind, with the records each restored.
    /// - Throws: ``WorkerError`` `changelog` for a record that cannot be restored, `kafka` when the changelog
    ///   cannot be read, `state` when the store cannot be written.
    func restore(_ partitions: Set<Int32>, watermarksFrom consumer: Consumer) throws(WorkerError) -> Report {
        let stored: [Int32: Int64]
        do {
            stored = try store.loadChangelogOffsets()
        } catch {
            throw WorkerError(.state, "cannot read the changelog offsets", underlying: error)
        }
        var behind: [Int32: Behind] = [:]
        var reached: [Int32: Int64] = [:]
        for partition in partitions {
            let bounds: (low: Int64, high: Int64)
            do {
                bounds = try consumer.watermarks(of: TopicPartition(topic, partition))
            } catch {
                throw WorkerError(.kafka, "cannot read the end of changelog partition \(partition)", underlying: error)
            }
            let from = max(stored[partition] ?? bounds.low, bounds.low)
            if from < bounds.high {
                behind[partition] = Behind(readFrom: transactional ? bounds.low : from, from: from, end: bounds.high)
            }
            if from >= bounds.high && stored[partition] == nil { reached[partition] = bounds.high }
        }
        // Every assigned partition's restore series, 0 when nothing is behind: a dashboard shows them from the
        // assignment on, and an alert's increase() counts a restore's first records.
        for partition in partitions {
            let dimensions = [("partition", "\(partition)")]
            Gauge(label: MetricName.changelogRestoreRemaining, dimensions: dimensions, factory: metricsFactory)
                .record(behind[partition].map { $0.end - $0.from } ?? 0)
            Counter(label: MetricName.changelogRestored, dimensions: dimensions, factory: metricsFactory)
                .increment(by: 0)
        }
        if !reached.isEmpty {
            // The store holds all there is of these: its own records will follow on from the end.
            do {
                try store.restore(devices: [], changelogOffsets: reached)
            } catch {
                throw WorkerError(.state, "cannot write the changelog offsets", underlying: error)
            }
        }
        guard !behind.isEmpty else { return Report() }
        let clock = ContinuousClock()
        let start = clock.now
        var report = try read(behind)
        report.elapsed = clock.now - start
        for (partition, records) in report.records.sorted(by: { $0.key < $1.key }) {
            logger.info(
                "restored partition \(partition) from the changelog",
                metadata: [
                    ServiceLogKey.topic: "\(topic)", ServiceLogKey.partition: "\(partition)",
                    ServiceLogKey.records: "\(records)",
                    ServiceLogKey.elapsed: "\(report.elapsed)",
                ]
            )
        }
        reportStaleStates(report.outcome, partitions: report.records.keys.sorted())
        CrashPoint.reached(.changelogRestored)
        return report
    }

    /// A changelog partition the store lacks records of.
    private struct Behind {
        /// Where the read starts (``transactional``: the partition's beginning).
        let readFrom: Int64
        /// The first record the store lacks.
        let from: Int64
        /// The partition's end: its `read_committed` high watermark when the restore began.
        let end: Int64
    }

    private func read(_ behind: [Int32: Behind]) throws(WorkerError) -> Report {
        let consumer: Consumer
        do {
            consumer = try Consumer(
                configuration: consumerConfiguration,
                subscription: .partitions(
                    Dictionary(
                        uniqueKeysWithValues: behind.map { (TopicPartition(topic, $0.key), .offset($0.value.readFrom)) }
                    )
                ),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot start the changelog restore consumer", underlying: error)
        }
        defer { consumer.close() }
        var next = behind.mapValues(\.from)
        var report = Report()
        // The newest record of each device read since the last flush (nil: a tombstone). An uncompacted
        // changelog holds a record per checkpoint a device changed in; the newest by applied offsets counts, which
        // is the last one unless an instance that had lost the partition wrote late.
        var latest: [String: RestoredDevice?] = [:]
        var pendingOffsets: [Int32: Int64] = [:]
        let remaining = behind.keys.map { partition in
            (
                partition,
                Gauge(
                    label: MetricName.changelogRestoreRemaining,
                    dimensions: [("partition", "\(partition)")],
                    factory: metricsFactory
                )
            )
        }
        let restoredCounters = Dictionary(
            uniqueKeysWithValues: behind.keys.map { partition in
                (
                    partition,
                    Counter(
                        label: MetricName.changelogRestored,
                        dimensions: [("partition", "\(partition)")],
                        factory: metricsFactory
                    )
                )
            }
        )

        func flush() throws(WorkerError) {
            guard !pendingOffsets.isEmpty else { return }
            do {
                let outcome = try store.restore(
                    devices: latest.values.compactMap { $0?.encoded },
                    changelogOffsets: pendingOffsets,
                    removing: latest.compactMap { $0.value == nil ? $0.key : nil }
                )
                report.outcome.replaced += outcome.replaced
                report.outcome.keptNewer += outcome.keptNewer
            } catch {
                throw WorkerError(.state, "cannot write restored devices", underlying: error)
            }
            latest.removeAll(keepingCapacity: true)
            pendingOffsets.removeAll()
            for (partition, gauge) in remaining { gauge.record(max(0, behind[partition]!.end - next[partition]!)) }
        }

        var lastProgressLog = ContinuousClock.now
        while behind.contains(where: { next[$0.key]! < $0.value.end }) {
            let batch: ConsumerBatch
            do {
                batch = try consumer.poll(maxMessages: Self.batchSize, timeout: .milliseconds(100))
            } catch {
                throw WorkerError(.kafka, "cannot read the changelog \(topic)", underlying: error)
            }
            for record in batch {
                let partition = record.partition
                guard let range = behind[partition], record.offset >= range.from, record.offset < range.end else {
                    continue
                }
                switch try Self.decode(record, topic: topic) {
                case .device(let device):
                    if case .some(.some(let earlier)) = latest[device.encoded.deviceId] {
                        if device.appliedOffsets.precedes(earlier.appliedOffsets) { break }
                        if !earlier.appliedOffsets.precedes(device.appliedOffsets)
                            && earlier.appliedOffsets != device.appliedOffsets
                        {
                            reportUnordered(device, after: earlier, at: record.offset)
                        }
                    }
                    latest[device.encoded.deviceId] = .some(device)
                case .forgotten(let deviceId): latest[deviceId] = .some(nil)
                }
                next[partition] = record.offset + 1
                pendingOffsets[partition] = record.offset + 1
                report.records[partition, default: 0] += 1
                restoredCounters[partition]?.increment()
            }
            // Compaction leaves gaps, and the last offsets may be gone: the end of the partition settles it.
            for ended in batch.partitionsReachedEnd where ended.topic == topic {
                guard let end = behind[ended.partition]?.end, next[ended.partition]! < end else { continue }
                next[ended.partition] = end
                pendingOffsets[ended.partition] = end
            }
            if latest.count >= Self.batchSize || batch.isEmpty { try flush() }
            if ContinuousClock.now - lastProgressLog > .seconds(10) {
                lastProgressLog = .now
                let left = behind.reduce(0) { $0 + max(0, $1.value.end - next[$1.key]!) }
                logger.info(
                    "restoring from the changelog",
                    metadata: [ServiceLogKey.topic: "\(topic)", ServiceLogKey.remaining: "\(left)"]
                )
            }
        }
        try flush()
        return report
    }

    /// Logs and counts the stored states the restore found older than the changelog's (replaced: this store was
    /// behind, or this instance is back with states from before another applied the partitions' input), and those it
    /// found newer than a record (kept: a record written late).
    private func reportStaleStates(_ outcome: RestoreOutcome, partitions: [Int32]) {
        Counter(label: MetricName.changelogRestoreReplacedStates, factory: metricsFactory)
            .increment(by: outcome.replaced)
        Counter(label: MetricName.changelogRestoreKeptStates, factory: metricsFactory).increment(by: outcome.keptNewer)
        guard outcome.replaced > 0 || outcome.keptNewer > 0 else { return }
        logger.notice(
            """
            the store held \(outcome.replaced) device states older than the changelog's, replaced by the newer \
            records, and \(outcome.keptNewer) newer than a record read, kept
            """,
            metadata: [
                ServiceLogKey.topic: "\(topic)", KafkaLogKey.partitions: "\(partitions)",
                ServiceLogKey.replaced: "\(outcome.replaced)", ServiceLogKey.kept: "\(outcome.keptNewer)",
            ]
        )
    }

    /// Reports two records of one device of which neither reflects all the other does (``Invariant/restoreOrder``).
    ///
    /// They were applied in different orders, and which is newer cannot be told. The later record is kept.
    private func reportUnordered(_ device: RestoredDevice, after earlier: RestoredDevice, at offset: Int64) {
        InvariantReporter(logger: logger, factory: metricsFactory).report(
            .restoreOrder,
            count: 1,
            [
                ServiceLogKey.topic: "\(topic)", ServiceLogKey.partition: "\(device.encoded.partition)",
                ServiceLogKey.offset: "\(offset)",
                ServiceLogKey.device: "\(device.encoded.deviceId)",
                ServiceLogKey.appliedOffsets: "\(earlier.appliedOffsets) then \(device.appliedOffsets)",
            ]
        )
    }

    /// A device's state as a changelog record carries it, with the applied offsets that say how new it is.
    struct RestoredDevice: Hashable {
        let encoded: EncodedDevice
        let appliedOffsets: AppliedOffsets
    }

    /// What a changelog record restores.
    enum Restored: Hashable {
        case device(RestoredDevice)
        /// A tombstone: the device is forgotten.
        case forgotten(String)
    }

    /// Checks one record: its key is a device id, its value decodes to that device's state (or is null).
    ///
    /// - Throws: ``WorkerError`` `changelog` naming the record's partition, offset and key.
    static func decode(_ record: ConsumerRecord, topic: String) throws(WorkerError) -> Restored {
        let place = "changelog record \(topic)[\(record.partition)]@\(record.offset)"
        guard let key = record.key, let deviceId = String(validating: key, as: UTF8.self), !deviceId.isEmpty else {
            throw WorkerError(.changelog, "\(place) has no device id as its key")
        }
        guard let value = record.value else { return .forgotten(deviceId) }
        let state: DeviceState
        do {
            state = try DeviceStateEncoding.decode(value)
        } catch {
            throw WorkerError(
                .changelog,
                "\(place) (device \(deviceId)) cannot be restored: \(error); the worker stops rather than start "
                    + "the device from nothing"
            )
        }
        guard state.deviceId == deviceId else {
            throw WorkerError(.changelog, "\(place) is keyed \(deviceId) but holds device \(state.deviceId)")
        }
        return .device(
            RestoredDevice(
                encoded: EncodedDevice(deviceId: deviceId, partition: record.partition, bytes: value),
                appliedOffsets: state.appliedOffsets
            )
        )
    }
}
