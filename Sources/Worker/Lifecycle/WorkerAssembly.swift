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
        lifecycle = LifecycleShell(
            backoff: .init(
                initial: configuration.deliveryRetry.initialBackoff,
                maximum: configuration.deliveryRetry.maximumBackoff
            ),
            health: health
        )
        let tracker: DeviceTracker
        do {
            tracker = DeviceTracker(
                configuration: configuration.tracker,
                countries: try CountryIndex.bundled(coastalTolerance: configuration.coastalTolerance),
                languages: try CountryLanguages.bundled()
            )
        } catch {
            throw WorkerError(.countries, "cannot read the bundled country data", underlying: error)
        }
        let store: StateStore
        do {
            directoryLock = try StateDirectoryLock(directory: configuration.stateDirectory)
            store = try StateStore(directory: configuration.stateDirectory)
            ledger = OffsetLedger(topics: configuration.topics, stored: try store.loadOffsets())
        } catch {
            throw WorkerError(.state, "state directory \(configuration.stateDirectory)", underlying: error)
        }
        let routing = DeviceRouting(shardCount: max(1, configuration.applyThreads))
        applyThreads = ApplyThreads(threadCount: routing.shardCount)
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
            writer: CheckpointWriter(store: store),
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

    /// A run's Kafka parts: the producers (the topics checked first), and the group's membership with the
    /// consumer the loop polls, joined.
    ///
    /// - Throws: ``WorkerError`` `kafka` or `topics` (see ``KafkaClients/init(configuration:logger:)``).
    func connect(
        logger: Logger
    ) throws(WorkerError) -> (clients: KafkaClients, group: RebalanceCoordinator, consumer: Consumer) {
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
            logger: logger
        )
        do {
            return (clients, group, try group.join())
        } catch {
            clients.close()
            throw error
        }
    }
}
