import Foundation
import Kafka
import Logging
import Metrics

/// The worker's membership in its consumer group for one run: owns the group's consumer and its rebalance
/// hooks, which run inside the loop's poll, on the loop's thread.
///
/// On an assignment: the checkpoint in hand is written; the lifecycle says whether to take it (a worker that
/// is starting or leaving does not); ``PartitionHandover`` restores what is behind the changelog and says
/// where each partition starts; the assigned partitions' devices are loaded (``HeldDevices``) and starts past
/// the store are stored. On a revocation: a checkpoint is taken and written, committed to the group while the
/// partitions are still this member's, and the revoked partitions are forgotten by the ledger and, after the
/// poll, by the loop's merge (``takeRevoked()``).
///
/// A hook cannot throw through librdkafka: a failure in one is reported to the lifecycle, whose answer to
/// the end of the poll (``WorkerLifecycle/polled(now:)``) stops the loop; a refused delivery is found by the loop
/// after the poll (``CheckpointCoordinator/failure``) and rewinds.
final class RebalanceCoordinator: @unchecked Sendable {
    // @unchecked: librdkafka calls the hooks from inside the loop's poll, on the loop's thread, the only
    // thread that touches this coordinator.
    private let configuration: WorkerConfiguration
    private let clients: KafkaClients
    private let handover: PartitionHandover
    private let applyThreads: ApplyThreads
    private let checkpoints: CheckpointCoordinator
    private let devices: HeldDevices
    private let ledger: OffsetLedger
    private let lifecycle: LifecycleShell
    private let logger: Logger
    /// Counts the assignments lost (``MetricName/assignmentsLost``).
    private let lostAssignments: Counter
    /// The group's consumer, from ``join()`` until ``leave()``.
    private var consumer: Consumer?
    /// Input partition numbers revoked since ``takeRevoked()``.
    private var revoked: Set<Int32> = []

    init(
        configuration: WorkerConfiguration,
        clients: KafkaClients,
        handover: PartitionHandover,
        applyThreads: ApplyThreads,
        checkpoints: CheckpointCoordinator,
        devices: HeldDevices,
        ledger: OffsetLedger,
        lifecycle: LifecycleShell,
        lostAssignments: Counter,
        logger: Logger
    ) {
        self.configuration = configuration
        self.clients = clients
        self.handover = handover
        self.applyThreads = applyThreads
        self.checkpoints = checkpoints
        self.devices = devices
        self.ledger = ledger
        self.lifecycle = lifecycle
        self.lostAssignments = lostAssignments
        self.logger = logger
    }

    /// Creates the group's consumer, subscribed to both input topics, with this coordinator's hooks.
    ///
    /// - Throws: ``WorkerError`` `kafka` when librdkafka refuses a property or cannot start the consumer.
    func join() throws(WorkerError) -> Consumer {
        do {
            let consumer = try Consumer(
                configuration: KafkaClients.groupConsumerConfiguration(configuration),
                subscription: .group(topics: [configuration.topics.positions, configuration.topics.commands]),
                rebalanceHandler: RebalanceHandler(
                    onAssign: { [weak self] partitions in self?.assign(partitions) ?? [:] },
                    onRevoke: { [weak self] partitions, isLost in self?.revoke(partitions, isLost: isLost) }
                ),
                logger: logger
            )
            self.consumer = consumer
            return consumer
        } catch {
            throw WorkerError(.kafka, "cannot create the consumer", underlying: error)
        }
    }

    /// Leaves the group: closing the consumer revokes its partitions, which checkpoints what was applied.
    func leave() {
        consumer?.close()
        consumer = nil
    }

    /// The input partition numbers revoked since the last call: the loop drops what its merge buffers for them
    /// (their next owner, this worker again after an eager rebalance included, reads them again).
    func takeRevoked() -> Set<Int32> {
        defer { revoked = [] }
        return revoked
    }

    /// The assign hook: where each partition starts, or nothing when the worker does not take the assignment.
    private func assign(_ partitions: [TopicPartition]) -> [TopicPartition: Int64] {
        guard let consumer else { return [:] }
        applyThreads.finish()
        do {
            // Where partitions start depends on what the store holds: the checkpoint in hand first.
            try checkpoints.waitUntilWritten()
        } catch  where !error.isCheckpointRefusal {
            abandon(with: error)
            return [:]
        } catch {
            // Refused: the loop rewinds after this poll, to the store as it stands.
        }
        guard lifecycle.report({ $0.assigned() }) == .restore else { return [:] }
        let started = ContinuousClock.now
        do {
            let assignment = try handover.assign(
                partitions,
                consumer: consumer,
                held: devices.partitions,
                storedOffsets: ledger.stored
            )
            if assignment.reloadDevices { try devices.load(partitions: Set(partitions.map(\.partition))) }
            try checkpoints.storeStarts(assignment.advanced)
            logger.info(
                "assigned \(partitions.count) partitions",
                metadata: [
                    ServiceLogKey.resuming: "\(assignment.resuming)",
                    ServiceLogKey.devices: "\(devices.holdings.devices)",
                    ServiceLogKey.restoredRecords: "\(assignment.restored.records.values.reduce(0, +))",
                    ServiceLogKey.elapsed: "\(ContinuousClock.now - started)",
                ]
            )
            guard lifecycle.report({ $0.restored() }) == .consume else { return [:] }
            return assignment.starts
        } catch {
            abandon(with: error)
            return [:]
        }
    }

    /// The revoke hook: finishes the work in flight for partitions about to go, commits it to the group while
    /// they are still this member's, and forgets what was read of them.
    ///
    /// Partitions already lost (the member was gone past its session) are another member's: what was applied
    /// since the last checkpoint is dropped, never written (``lose(_:)``).
    private func revoke(_ partitions: [TopicPartition], isLost: Bool) {
        logger.info("revoking \(partitions.count) partitions", metadata: [ServiceLogKey.lost: "\(isLost)"])
        if isLost {
            lose(partitions)
        } else if let consumer {
            do {
                try checkpoints.submit(changelog: clients.changelogSink, consumer: consumer)
                try checkpoints.waitUntilWritten()
            } catch  where !error.isCheckpointRefusal {
                abandon(with: error)
            } catch {
                // Refused: the loop rewinds after this poll, to the state as last stored.
            }
            // The group may refuse the commit while it rebalances; the stored offsets are what counts.
            checkpoints.commitStored(of: partitions, consumer: consumer, waitForAnswer: true)
        }
        for partition in partitions {
            ledger.forgetRead(partition: partition.partition)
            revoked.insert(partition.partition)
        }
    }

    /// The partitions were lost: another member may be applying their input already.
    ///
    /// Nothing more of them is written
    /// (a checkpoint the writer has in hand meets the ``MembershipCheck``); after the poll the loop rewinds to the
    /// store without backing off, and the next assignment restores what the others wrote meanwhile.
    private func lose(_ partitions: [TopicPartition]) {
        let stored = ledger.stored.filter { partitions.contains($0.key) }
        logger.error(
            """
            lost \(partitions.count) partitions to the group's other members (this instance was gone past its \
            session); dropping what was applied since the last checkpoint
            """,
            metadata: [
                KafkaLogKey.partitions: "\(partitions.sorted())",
                ServiceLogKey.storedOffsets: "\(stored.sorted { $0.key < $1.key }.map { "\($0.key)@\($0.value)" })",
            ]
        )
        lostAssignments.increment()
        let action = lifecycle.report { $0.assignmentLost(WorkerError(.fenced, "lost \(partitions.count) partitions")) }
        assert(action == .none, "a loss is acted on after the poll")
    }

    /// Reports a failure met in a hook to the lifecycle.
    ///
    /// Its action, to fail (or nothing once stopped), is carried out by the loop after the poll: its answer to
    /// ``WorkerLifecycle/polled(now:)`` says the same.
    private func abandon(with error: WorkerError) {
        let action = lifecycle.report { $0.failed(error) }
        assert(action == .fail(error) || action == .none, "a failure's action is to fail")
    }
}
