import Foundation
import GeoCore
import JSONCodec
import Kafka
import Logging
import Metrics
import PartitionOffsets

/// Reads the fleet's geofence catalog (`topics.geofences`) into the ``FleetCatalog`` the trackers read: the whole
/// topic before the worker joins its group, then each change as it comes.
///
/// Every instance reads every partition of the catalog, outside the group's assignment (a global table), with a
/// consumer of its own (`read_committed`, like the worker's). A record is a geofence keyed by its id
/// (``CatalogGeofence/decode(json:key:)``), in force from its message time; a tombstone deletes its geofence from its
/// message time on. A record that cannot be used is skipped, logged with its partition, offset and reason, counted
/// (`geoworker_catalog_records_total{outcome="refused"}`), and its dead letter handed to the loop
/// (``takeDeadLetters()``), which sends it like any other: each instance that reads it, once per start.
///
/// Owned by the loop's thread. The loop takes the changes with ``takeChanges()`` at each round and applies them
/// (``apply(_:)``) only once the apply threads have applied everything handed to them: the trackers read the catalog
/// without a lock.
final class CatalogFeed {
    /// A catalog record as it changes the catalog.
    enum Change {
        case put(CatalogGeofence, at: Int64)
        case delete(id: String, at: Int64)

        /// The record's message time, from which the change is in force.
        var time: Int64 {
            switch self {
            case .put(_, let time), .delete(_, let time): time
            }
        }
    }

    /// What the start's reading of the whole catalog found.
    struct Load {
        var records = 0
        var refused = 0
        var elapsed: Duration = .zero
    }

    let topic: String
    /// The catalog's partitions, which every instance reads.
    let partitions: [TopicPartition]
    private let catalog: FleetCatalog
    /// How far each partition is known to be read: what the merge may release (``gate``).
    private var frontier: CatalogFrontier
    /// Nil when the topic does not exist and that is allowed (`catalog.allowMissingTopic`): the catalog stays empty.
    private let consumer: Consumer?
    private let logger: Logger
    private let geofences: Gauge
    private let applied: Counter
    private let refused: Counter
    private let loadSeconds: Gauge
    private let late: Counter
    private let waitsGivenUp: Counter
    private let versions: Gauge
    /// How far behind the newest position released old versions are kept (``WorkerConfiguration/CatalogSettings``).
    private let versionRetentionMilliseconds: Int64
    private let deadLetterTopic: String
    private let deadLetterLimits: DeadLetter.Limits
    /// When ended versions were last looked at for dropping.
    private var lastForgetting: ContinuousClock.Instant?
    /// The refused records' dead letters, until the loop takes them.
    private var deadLetters: [ProducerRecord] = []

    /// Makes the catalog's consumer, assigned every partition of the topic from its beginning.
    ///
    /// - Throws: ``WorkerError`` `topics` naming `topics.geofences` when the topic does not exist (unless
    ///   `catalog.allowMissingTopic`), `kafka` when the consumer cannot be made.
    init(
        configuration: WorkerConfiguration,
        catalog: FleetCatalog,
        logger: Logger,
        metricsFactory: any MetricsFactory
    ) throws(WorkerError) {
        let topic = configuration.topics.geofences
        self.topic = topic
        deadLetterTopic = configuration.topics.deadLetters
        versionRetentionMilliseconds = Int64(configuration.catalog.versionRetention.components.seconds) * 1000
        deadLetterLimits = configuration.deadLetterLimits
        self.catalog = catalog
        self.logger = logger
        geofences = Gauge(label: MetricName.catalogGeofences, factory: metricsFactory)
        applied = Counter(
            label: MetricName.catalogRecords,
            dimensions: [("outcome", "applied")],
            factory: metricsFactory
        )
        refused = Counter(
            label: MetricName.catalogRecords,
            dimensions: [("outcome", "refused")],
            factory: metricsFactory
        )
        loadSeconds = Gauge(label: MetricName.catalogLoadSeconds, factory: metricsFactory)
        versions = Gauge(label: MetricName.catalogVersions, factory: metricsFactory)
        late = Counter(label: MetricName.catalogLateRecords, factory: metricsFactory)
        waitsGivenUp = Counter(label: MetricName.catalogWaitsGivenUp, factory: metricsFactory)
        let asker: Consumer
        do {
            asker = try Consumer(
                configuration: KafkaClients.catalogConsumerConfiguration(configuration),
                subscription: .partitions([:]),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the catalog's consumer", underlying: error)
        }
        let count: Int
        do {
            count = try asker.partitionCount(topic: topic, timeout: TopicCheck.metadataTimeout)
        } catch  where error.code == .unknownTopicOrPartition && configuration.catalog.allowMissingTopic {
            logger.warning(
                "the catalog topic does not exist: the catalog is empty (catalog.allowMissingTopic)",
                metadata: [ServiceLogKey.topic: "\(topic)"]
            )
            asker.close()
            consumer = nil
            partitions = []
            frontier = CatalogFrontier(partitionCount: 0, bound: Self.waitBound)
            return
        } catch {
            asker.close()
            throw WorkerError(
                .topics,
                """
                the catalog topic \(topic) (topics.geofences): create it (compacted, any partition count), name \
                another one, or set catalog.allowMissingTopic to start with an empty catalog
                """,
                underlying: error
            )
        }
        asker.close()
        partitions = (0..<Int32(count)).map { TopicPartition(topic, $0) }
        frontier = CatalogFrontier(partitionCount: count, bound: Self.waitBound)
        do {
            consumer = try Consumer(
                configuration: KafkaClients.catalogConsumerConfiguration(configuration),
                subscription: .partitions(Dictionary(uniqueKeysWithValues: partitions.map { ($0, .beginning) })),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the catalog's consumer", underlying: error)
        }
    }

    deinit {
        consumer?.close()
    }

    /// How long the merge waits, at most, for a catalog it cannot confirm read through its records' times (its
    /// brokers unreachable): as long as for a lagging input side.
    static var waitBound: Duration { InputMerge<ConsumerRecord>.defaultLaggingSideWait }

    /// What the merge may release now (``CatalogGate``).
    var gate: CatalogGate { frontier.gate(readTo: endOffsets) }

    /// The brokers' answer about the catalog's ends (``EndQuestions``).
    func confirmEnds(_ answer: EndQuestions.Answer) {
        let ends = Dictionary(answer.ends.map { ($0.key.partition, $0.value) }) { $1 }
        frontier.confirm(ends, askedAfterPoll: answer.askedAfterPoll, readTo: endOffsets)
    }

    /// Whether the gate held records back in this round; past the bound it opens, counted and logged.
    func noteHeld(_ held: Bool, now: ContinuousClock.Instant) {
        guard frontier.noteHeld(held, now: now) else { return }
        waitsGivenUp.increment()
        logger.warning(
            """
            the catalog could not be confirmed read through the positions' times within \(Self.waitBound): they go on \
            without it, so these events may differ from a run where it was read in time
            """,
            metadata: [ServiceLogKey.topic: "\(topic)"]
        )
    }

    /// The partitions read to their end, each with the offset its end-of-partition event reported.
    private var endOffsets: [Int32: Int64] {
        guard let consumer else { return [:] }
        return Dictionary(consumer.endOffsets.filter { $0.key.topic == topic }.map { ($0.key.partition, $0.value) }) {
            $1
        }
    }

    /// Reads the catalog up to where each partition ended when the load began, into a catalog of its own, and puts it
    /// in place of the trackers' (before any of them runs).
    ///
    /// Records that arrive meanwhile are read with the next ``takeChanges()``.
    ///
    /// - Returns: how many records it read and refused, and how long it took.
    /// - Throws: ``WorkerError`` `kafka` when the catalog cannot be read; nothing, with the load given up, when `stop`
    ///   is asked for.
    func load(unless stop: StopRequest) throws(WorkerError) -> Load {
        let clock = ContinuousClock()
        let start = clock.now
        var load = Load()
        guard let consumer else { return load }
        var ends: [TopicPartition: Int64] = [:]
        do {
            ends = try consumer.offsets(.end, of: partitions, timeout: .seconds(10))
        } catch {
            throw WorkerError(.kafka, "cannot read where the catalog \(topic) ends", underlying: error)
        }
        var next = Dictionary(uniqueKeysWithValues: partitions.map { ($0, Int64(0)) })
        var loaded = GeofenceCatalog()
        var lastProgress = clock.now
        while next.contains(where: { $0.value < ends[$0.key] ?? 0 }) && !stop.isAsked {
            let batch: ConsumerBatch
            do {
                batch = try consumer.poll(maxMessages: 50_000, timeout: .milliseconds(100))
            } catch {
                throw WorkerError(.kafka, "cannot read the catalog \(topic)", underlying: error)
            }
            for record in batch {
                let partition = TopicPartition(topic, record.partition)
                next[partition] = record.offset + 1
                load.records += 1
                frontier.noteRead(partition: record.partition, timestamp: record.timestampMilliseconds ?? 0)
                if let change = change(of: record) { Self.apply(change, to: &loaded) } else { load.refused += 1 }
            }
            // Compaction leaves gaps, and a transaction's marker takes the last offset: the end settles it.
            for ended in batch.partitionsReachedEnd where ended.topic == topic {
                next[TopicPartition(topic, ended.partition)] = max(next[ended] ?? 0, ends[ended] ?? 0)
            }
            if clock.now - lastProgress > .seconds(5) {
                lastProgress = clock.now
                logger.info(
                    "reading the catalog",
                    metadata: [ServiceLogKey.topic: "\(topic)", ServiceLogKey.records: "\(load.records)"]
                )
            }
        }
        catalog.geofences = loaded
        load.elapsed = clock.now - start
        geofences.record(loaded.count)
        versions.record(loaded.versionCount)
        loadSeconds.record(
            Double(load.elapsed.components.seconds) + Double(load.elapsed.components.attoseconds) * 1e-18
        )
        return load
    }

    /// The catalog's records that came since the last call, without waiting for any.
    func takeChanges() -> [Change] {
        guard let consumer else { return [] }
        let batch: ConsumerBatch
        do {
            batch = try consumer.poll(maxMessages: 10_000, timeout: .zero)
        } catch {
            logger.warning("cannot read the catalog; trying again", metadata: [ServiceLogKey.error: "\(error)"])
            return []
        }
        for record in batch {
            frontier.noteRead(partition: record.partition, timestamp: record.timestampMilliseconds ?? 0)
        }
        return batch.compactMap(change(of:))
    }

    /// Whether ended versions wait to be dropped and were last looked at 10 s ago or more: the loop then applies no
    /// change all the same (``apply(_:released:now:)``), so that a catalog that stopped changing drops them too.
    func wantsForgetting(now: ContinuousClock.Instant) -> Bool {
        catalog.geofences.endedVersionCount > 0 && lastForgetting.map { now - $0 >= .seconds(10) } ?? true
    }

    /// The dead letters of the records refused since the last call, for the loop to send.
    func takeDeadLetters() -> [ProducerRecord] {
        defer { deadLetters = [] }
        return deadLetters
    }

    /// Applies changes to the trackers' catalog; the caller makes sure no apply thread runs.
    ///
    /// A change stamped before `released` (the newest record time the merge has released) comes late for the records
    /// between: it is in force from its time for what is applied after it, and counted. The versions that ended longer
    /// than the retention before `released` are dropped: only changes make versions end, so they are looked at here.
    func apply(_ changes: [Change], released: Int64, now: ContinuousClock.Instant) {
        for change in changes {
            Self.apply(change, to: &catalog.geofences)
            if change.time < released { late.increment() }
        }
        if released > .min {
            catalog.geofences.forgetVersions(endedBy: released - versionRetentionMilliseconds)
            lastForgetting = now
        }
        geofences.record(catalog.geofences.count)
        versions.record(catalog.geofences.versionCount)
    }

    private static func apply(_ change: Change, to catalog: inout GeofenceCatalog) {
        switch change {
        case .put(let geofence, let time): catalog.put(geofence, at: time)
        case .delete(let id, let time): catalog.delete(id: id, at: time)
        }
    }

    /// The change a record makes; nil for one that cannot be used (logged and counted).
    private func change(of record: ConsumerRecord) -> Change? {
        let time = record.timestampMilliseconds ?? 0
        let key = record.withKey { $0.map { String(decoding: $0, as: UTF8.self) } }
        let decoded: Result<Change, DecodingFailure>? = record.withValue { value in
            guard let value else { return nil }
            return CatalogGeofence.decode(json: value, key: key).map { .put($0, at: time) }
        }
        switch decoded {
        case .success(let change)?:
            applied.increment()
            return change
        case nil:
            guard let key, !key.isEmpty else {
                return refuse(record, reason: "missing-field", "a tombstone without a key names no geofence")
            }
            applied.increment()
            return .delete(id: key, at: time)
        case .failure(let failure)?:
            return refuse(record, reason: failure.reason.rawValue, "\(failure)")
        }
    }

    private func refuse(_ record: ConsumerRecord, reason: String, _ error: String) -> Change? {
        refused.increment()
        logger.warning(
            "a catalog record that cannot be used is skipped",
            metadata: [
                ServiceLogKey.topic: "\(topic)", ServiceLogKey.partition: "\(record.partition)",
                ServiceLogKey.offset: "\(record.offset)", ServiceLogKey.reason: "\(error)",
            ]
        )
        let origin = MessageOrigin(
            topic: topic,
            partition: record.partition,
            offset: record.offset,
            timestamp: record.timestampMilliseconds ?? 0
        )
        deadLetters.append(
            record.withKeyAndValue { key, value in
                DeadLetter.record(
                    topic: deadLetterTopic,
                    value: value,
                    key: key,
                    origin: origin,
                    reason: reason,
                    error: error,
                    limits: deadLetterLimits
                )
            }
        )
        return nil
    }
}
