import Countries
import GeoCore
import Kafka
import Logging
import Metrics
import StateStore

/// Builds the worker's parts from its configuration, once, and wires them to each other: the country data and the
/// tracker, the state directory's lock and store, the offset ledger, the checkpoint writer and its coordinator, the
/// apply threads and the devices they hold, the recovery from refused deliveries, and the hand-over of partitions.
///
/// A run's Kafka parts (``KafkaClients``, ``RebalanceCoordinator``) are made by ``connect(logger:)`` when the loop
/// starts.
///
/// Every part lives on the loop's thread unless its own documentation says otherwise.
struct WorkerAssembly {
    let configuration: WorkerConfiguration
    let lifecycle: LifecycleShell
    let ledger: OffsetLedger
    let applyThreads: ApplyThreads
    let devices: HeldDevices
    let checkpoints: CheckpointCoordinator
    let recovery: DeliveryRecovery
    let handover: PartitionHandover
    /// This process's claim on the state directory, for the worker's life.
    let directoryLock: StateDirectoryLock
    /// Counts the assignments lost while the instance was gone past its session.
    let lostAssignments: Counter
    /// Logs and counts the breaches of the invariants the loop checks.
    let invariants: InvariantReporter

    /// Opens the state directory and loads the country index.
    ///
    /// - Throws: ``WorkerError`` when the state directory or the country data cannot be read.
    init(
        _ configuration: WorkerConfiguration,
        health: WorkerHealth,
        logger: Logger,
        metricsFactory: any MetricsFactory
    ) throws(WorkerError) {
        self.configuration = configuration
        lostAssignments = Counter(label: MetricName.assignmentsLost, factory: metricsFactory)
        invariants = InvariantReporter(logger: logger, factory: metricsFactory)
        lifecycle = LifecycleShell(
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
        do {
            tracker = DeviceTracker(
                configuration: configuration.tracker,
                countries: try CountryIndex.bundled(coastalTolerance: configuration.coastalTolerance),
                languages: try CountryLanguages.bundled(),
                places: places
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
        do {
            ledger = OffsetLedger(topics: configuration.topics, stored: try store.loadOffsets())
        } catch {
            throw WorkerError(.state, "state directory \(configuration.stateDir)", underlying: error)
        }
        let routing = DeviceRouting(applyThreads: max(1, configuration.applyThreads))
        applyThreads = ApplyThreads(count: routing.applyThreads)
        devices = HeldDevices(store: store) { states in
            ShardedDevices(states: states, routing: routing) {
                InputProcessor(
                    registry: DeviceRegistry(tracker: tracker, states: $0),
                    topics: configuration.topics,
                    deadLetterLimits: configuration.deadLetters
                )
            }
        }
        checkpoints = CheckpointCoordinator(
            writer: CheckpointWriter(
                store: store,
                durations: Metrics.Timer(label: MetricName.checkpointDuration, factory: metricsFactory)
            ),
            interval: configuration.checkpointInterval,
            ledger: ledger,
            applyThreads: applyThreads,
            devices: devices,
            metrics: CheckpointMetrics(factory: metricsFactory),
            logger: logger
        )
        recovery = DeliveryRecovery(
            applyThreads: applyThreads,
            devices: devices,
            ledger: ledger,
            checkpoints: checkpoints,
            metricsFactory: metricsFactory,
            logger: logger
        )
        handover = PartitionHandover(
            restore: configuration.changelog.enabled
                ? ChangelogRestore(
                    topic: configuration.changelogTopic,
                    store: store,
                    consumerConfiguration: KafkaClients.restoreConsumerConfiguration(configuration),
                    logger: logger,
                    metricsFactory: metricsFactory
                ) : nil,
            startWithoutProgress: KafkaClients.startWithoutProgress(configuration),
            logger: logger
        )
    }

    /// A run's Kafka parts: the producers, the group's membership, and its consumer, joined.
    struct Connection {
        let clients: KafkaClients
        let group: RebalanceCoordinator
        let consumer: Consumer

        /// Leaves the group (its last revocation checkpoints, with the producers still there), then closes the
        /// producers.
        func close() {
            group.leave()
            clients.close()
        }
    }

    /// Connects a run's Kafka parts (the topics checked first), waiting for Kafka while it cannot be reached:
    /// not ready meanwhile, one log line per attempt, the back-off of refused deliveries between attempts, until
    /// the retry budget is spent (``WorkerConfiguration/retryBudget``).
    ///
    /// - Parameters:
    ///   - logger: where each failed attempt is logged.
    ///   - clock: when the next attempt is due.
    ///   - stopRequested: whether to stop waiting: the worker was asked to stop.
    /// - Returns: the connection; nil when a stop was asked for while waiting.
    /// - Throws: ``WorkerError``: what is not passing (a topic missing, a property refused), or `unavailable` once
    ///   the budget is spent.
    func connect(
        logger: Logger,
        clock: any WorkerClock,
        unless stopRequested: () -> Bool
    ) throws(WorkerError) -> Connection? {
        while true {
            do {
                return try connectOnce(logger: logger)
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
                switch lifecycle.waitOutBackoff(afterFailure, clock: clock, stopRequested: stopRequested) {
                case .connect: continue
                case .exit: return nil
                case let other: preconditionFailure("waiting for Kafka ended with \(other)")
                }
            }
        }
    }

    private func connectOnce(logger: Logger) throws(WorkerError) -> Connection {
        let clients = try KafkaClients(configuration: configuration, logger: logger)
        let group = RebalanceCoordinator(
            configuration: configuration,
            clients: clients,
            handover: handover,
            applyThreads: applyThreads,
            checkpoints: checkpoints,
            devices: devices,
            ledger: ledger,
            lifecycle: lifecycle,
            lostAssignments: lostAssignments,
            logger: logger
        )
        do {
            return Connection(clients: clients, group: group, consumer: try group.join())
        } catch {
            clients.close()
            throw error
        }
    }
}
