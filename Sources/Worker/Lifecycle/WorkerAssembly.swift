import Addresses
import Countries
import GeoCore
import Kafka
import Logging
import Metrics
import StateStore

/// Builds the worker's parts from its configuration, once: the country data and the tracker, the state directory's
/// lock and store, the progress and its checkpoints (``Checkpointing``), the apply threads and the devices they hold,
/// and the hand-over of partitions.
///
/// The ``Worker``'s loop is the one owner of every part: the checkpoint, the rebalance hooks and the rewind are the
/// loop's moments, which take the parts they need from here. A run's Kafka parts (``Connection``) are made by
/// ``connect(logger:clock:unless:)`` when the loop starts.
struct WorkerAssembly {
    let configuration: WorkerConfiguration
    let lifecycle: PublishedLifecycle
    /// The input's progress, and the checkpoint, assignment, revocation, rewind and stop sequences that move it.
    let progress: Checkpointing
    let applyThreads: ApplyThreads
    let devices: AssignedDevices
    let handover: PartitionHandover
    /// This process's claim on the state directory, for the worker's life.
    let directoryLock: StateDirectoryLock
    /// Counts the assignments lost while the instance was gone past its session.
    let lostAssignments: Counter
    /// Counts the checkpoints the disk refused; made with the worker, so that it is exposed at 0 before the first
    /// refusal (an alert's `increase()` does not count a series that appears already above zero).
    let stateWriteFailures: Counter
    /// Where the delivery failures' counters are made, by topic and error, as they occur.
    let metricsFactory: any MetricsFactory
    /// Logs and counts the breaches of the invariants the loop checks.
    let invariants: InvariantReporter
    /// The fleet's geofence catalog the trackers read (`catalog.enabled`), filled by the connection's ``CatalogFeed``;
    /// nil when off.
    let catalog: FleetCatalog?

    /// Opens the state directory and loads the country index.
    ///
    /// - Parameters:
    ///   - configuration: the worker's settings.
    ///   - health: where the worker's state is shown.
    ///   - logger: where the parts log.
    ///   - metricsFactory: where the metrics go.
    ///   - clock: when checkpoints fall due.
    ///   - addressPrefetch: told of every fix applied, when `address.prefetch` is on.
    /// - Throws: ``WorkerError`` when the state directory or the country data cannot be read.
    init(
        _ configuration: WorkerConfiguration,
        health: WorkerHealth,
        logger: Logger,
        metricsFactory: any MetricsFactory,
        clock: any WorkerClock,
        addressPrefetch: (any AddressPrefetching)?
    ) throws(WorkerError) {
        self.configuration = configuration
        lostAssignments = Counter(label: MetricName.assignmentsLost, factory: metricsFactory)
        stateWriteFailures = Counter(label: MetricName.stateWriteFailures, factory: metricsFactory)
        self.metricsFactory = metricsFactory
        invariants = InvariantReporter(logger: logger, factory: metricsFactory)
        lifecycle = PublishedLifecycle(
            backoff: .init(
                initial: configuration.deliveryRetry.initialBackoff,
                maximum: configuration.deliveryRetry.maxBackoff,
                maxAttempts: configuration.retryBudget,
                stallTimeout: configuration.deliveryTimeout
            ),
            health: health
        )
        let tracker: DeviceTracker
        let places = try PlacesLoading.load(configuration.places, logger: logger)
        catalog = configuration.catalog.enabled ? FleetCatalog() : nil
        do {
            tracker = DeviceTracker(
                configuration: configuration.tracker,
                countries: try CountryIndex.bundled(coastalTolerance: configuration.coastalTolerance),
                languages: try CountryLanguages.bundled(),
                places: places,
                catalog: catalog
            )
        } catch {
            throw WorkerError(.countries, "cannot read the bundled country data", underlying: error)
        }
        do {
            directoryLock = try StateDirectoryLock(directory: configuration.stateDir)
        } catch {
            throw WorkerError(.state, "state directory \(configuration.stateDir)", underlying: error)
        }
        let store = try StoreOpening.open(configuration, logger: logger)
        let ledger: OffsetLedger
        do {
            ledger = OffsetLedger(topics: configuration.topics, stored: try store.loadOffsets())
        } catch {
            throw WorkerError(.state, "state directory \(configuration.stateDir)", underlying: error)
        }
        let routing = DeviceRouting(shardCount: max(1, configuration.applyThreadCount))
        applyThreads = ApplyThreads(count: routing.shardCount)
        devices = AssignedDevices(store: store) { states, tally in
            ShardedDevices(states: states, routing: routing, tally: tally) {
                InputProcessor(
                    registry: DeviceRegistry(tracker: tracker, states: $0),
                    topics: configuration.topics,
                    deadLetterLimits: configuration.deadLetterLimits,
                    addressPrefetch: addressPrefetch
                )
            }
        }
        progress = Checkpointing(
            ledger: ledger,
            cycle: CheckpointCycle(
                interval: configuration.checkpointInterval,
                storeInterval: configuration.changelogSettings.enabled && configuration.storeInterval > .zero
                    ? configuration.storeInterval : nil,
                // Under exactly-once each checkpoint commits its input offsets, which a restart resumes from.
                logsEventfulBetweenStores: configuration.transactionalId == nil,
                startedAt: clock.now
            ),
            writer: CheckpointWriter(
                store: store,
                durations: Metrics.Timer(label: MetricName.checkpointDuration, factory: metricsFactory)
            ),
            metrics: CheckpointMetrics(factory: metricsFactory),
            lifecycle: lifecycle,
            clock: clock,
            logger: logger,
            stateWriteFailures: stateWriteFailures,
            commitsToGroup: configuration.transactionalId == nil
        )
        handover = PartitionHandover(
            restore: configuration.changelogSettings.enabled
                ? ChangelogRestore(
                    topic: configuration.changelogTopic,
                    store: store,
                    consumerConfiguration: KafkaClients.restoreConsumerConfiguration(configuration),
                    logger: logger,
                    metricsFactory: metricsFactory,
                    transactional: configuration.transactionalId != nil
                ) : nil,
            startWithoutProgress: KafkaClients.startWithoutProgress(configuration),
            logger: logger
        )
    }

    /// A run's Kafka parts: the producers, and the group's consumer, joined.
    ///
    /// The loop polls the consumer with its rebalance hooks and closes it with them (``Worker``), so the consumer
    /// holds nothing of the worker's.
    struct Connection {
        let clients: KafkaClients
        let consumer: Consumer
        /// Reads the fleet's catalog as it changes; nil when the catalog is off.
        let catalogFeed: CatalogFeed?
    }

    /// Connects a run's Kafka parts (the topics checked first), waiting for Kafka while it cannot be reached:
    /// not ready meanwhile, one log line per attempt, the back-off of refused deliveries between attempts, until
    /// the retry budget is spent (``WorkerConfiguration/retryBudget``).
    ///
    /// - Parameters:
    ///   - logger: where each failed attempt is logged.
    ///   - clock: when the next attempt is due.
    ///   - stop: the worker's stop, which ends the wait when asked for.
    /// - Returns: the connection; nil when a stop was asked for while waiting.
    /// - Throws: ``WorkerError``: what is not passing (a topic missing, a property refused), or `unavailable` once
    ///   the budget is spent.
    func connect(
        logger: Logger,
        clock: any WorkerClock,
        unless stop: StopRequest
    ) throws(WorkerError) -> Connection? {
        while true {
            do {
                return try connectOnce(logger: logger, unless: stop)
            } catch {
                let afterFailure = lifecycle.report { $0.connectFailed(error, now: clock.now) }
                guard case .backOff(let until) = afterFailure else {
                    if case .fail(let first) = afterFailure { throw first }
                    throw error
                }
                logger.warning(
                    "cannot reach Kafka; trying again",
                    metadata: [ServiceLogKey.error: "\(error)", ServiceLogKey.retryIn: "\(until - clock.now)"]
                )
                switch lifecycle.waitOutBackoff(afterFailure, clock: clock, stop: stop) {
                case .connect: continue
                case .exit: return nil
                case let other: preconditionFailure("waiting for Kafka ended with \(other)")
                }
            }
        }
    }

    private func connectOnce(logger: Logger, unless stop: StopRequest) throws(WorkerError) -> Connection {
        let clients = try KafkaClients(configuration: configuration, logger: logger)
        // The whole catalog is read before the group is joined: no partition is taken, and no position applied,
        // against a catalog read in part.
        let catalogFeed: CatalogFeed?
        do {
            catalogFeed = try catalog.map { catalog throws(WorkerError) in
                let feed = try CatalogFeed(
                    configuration: configuration,
                    catalog: catalog,
                    logger: logger,
                    metricsFactory: metricsFactory
                )
                let load = try feed.load(unless: stop)
                let deadLetters = feed.takeDeadLetters()
                if !deadLetters.isEmpty { _ = clients.producer.send(deadLetters) }
                logger.info(
                    "catalog read",
                    metadata: [
                        ServiceLogKey.topic: "\(feed.topic)", ServiceLogKey.records: "\(load.records)",
                        ServiceLogKey.geofences: "\(catalog.geofences.count)",
                        ServiceLogKey.elapsed: "\(load.elapsed)",
                    ]
                )
                return feed
            }
        } catch {
            clients.close()
            throw error
        }
        do {
            let consumer = try Consumer(
                configuration: KafkaClients.groupConsumerConfiguration(configuration),
                subscription: .group(topics: [configuration.topics.positions, configuration.topics.commands]),
                logger: logger
            )
            return Connection(clients: clients, consumer: consumer, catalogFeed: catalogFeed)
        } catch {
            clients.close()
            throw WorkerError(.kafka, "cannot create the consumer", underlying: error)
        }
    }
}
