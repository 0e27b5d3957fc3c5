import Foundation
import GeoCore
import Kafka
import Metrics
import PartitionOffsets
import StateStore
import Threads

/// Writes one checkpoint at a time on a thread of its own, so that the loop goes on applying messages while a
/// checkpoint waits for its deliveries and for SQLite; the loop takes its answer when it is there (``takeAnswer()``).
///
/// A checkpoint is written in the order of the processing guarantee (docs/ARCHITECTURE.md): every record
/// sent before it was taken delivered; then each changed device's record delivered to the changelog topic
/// (``DeviceChangelog``); then the changed devices, next input offsets and changelog offsets committed in one
/// SQLite transaction, whose device rows are written while those records are delivered
/// (``CheckpointDelivery``). So neither the changelog nor the store ever covers a message whose events are
/// not delivered, and a crash between any two steps replays into the same events with the same ids.
///
/// A checkpoint that is not stored (the store may lag its changelog: ``StoreBacklog``) ends once its changelog records
/// are delivered; its answer gives the backlog with it added, for the next one that is stored, or for
/// ``storeBacklog(_:)``.
///
/// When to write and to store, and what an answer means, is the ``Checkpointing``'s to decide, which holds the
/// backlog; this type carries a write out.
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: `inHand`, `answer` and `delivery` are guarded by `condition`; the rest is immutable.

    /// What a written checkpoint covers: the input offsets whose events and changelog records are delivered
    /// (`logged`), and the input offsets now in the store, when it was stored (its backlog's included).
    struct Written: Equatable {
        var logged: [TopicPartition: Int64]
        var stored: [TopicPartition: Int64]?
        /// Under exactly-once, why the store could not be written after the transaction committed: the checkpoint
        /// stays in the backlog (the changelog holds it), and the next stored checkpoint tries again.
        var storeFailure: WorkerError?
        /// Whether it was a complete checkpoint (``Checkpoint/isComplete``): the changelog covers everything applied.
        var isComplete = true
        /// What the changelog holds and the store does not, after this write: empty once stored, else the backlog the
        /// write was given with this checkpoint added.
        var backlog = StoreBacklog()
    }

    /// What a written checkpoint covers, or why it was not written.
    typealias Answer = Result<Written, WorkerError>

    private let store: StateStore
    /// Behind the apply threads and the loop when the cores are busy: a checkpoint may take longer, an event not.
    private let thread = DedicatedThread(name: "gw-checkpoints", priority: .background)
    /// Where a checkpoint's deliveries are waited for and its changelog records sent (``CheckpointDelivery``).
    private let deliveryThread = DedicatedThread(name: "gw-deliveries")
    private let condition = NSCondition()
    /// Whether a checkpoint is with the writing thread.
    private var inHand = false
    /// The answer to the last write, until the loop takes it.
    private var answer: Answer?
    /// The delivery half of the write in hand, once the writing thread has started it.
    private var delivery: CheckpointDelivery?
    /// How long each checkpoint's writing took, refused or not.
    private let durations: Metrics.Timer

    init(store: StateStore, durations: Metrics.Timer) {
        self.store = store
        self.durations = durations
    }

    /// Hands a checkpoint to the writing thread and returns at once; `storing` writes it to the store with `backlog`
    /// (what earlier checkpoints delivered to the changelog only), else the answer's backlog is `backlog` with it added,
    /// once its changelog records are delivered.
    ///
    /// Only once the previous answer was taken.
    func write(_ checkpoint: Checkpoint, storing: Bool = true, backlog: StoreBacklog = StoreBacklog()) {
        condition.lock()
        precondition(!inHand && answer == nil, "a checkpoint handed to a writer with one in hand")
        inHand = true
        condition.unlock()
        thread.execute { [self] in
            let started = ContinuousClock.now
            let result = Answer { () throws(WorkerError) in try persist(checkpoint, storing: storing, backlog: backlog)
            }
            durations.record(duration: ContinuousClock.now - started)
            condition.lock()
            inHand = false
            delivery = nil
            answer = result
            condition.broadcast()
            condition.unlock()
        }
    }

    /// The answer to the last write if it has come; nil while it is being written (or nothing was handed over).
    func takeAnswer() -> Answer? {
        condition.lock()
        defer { condition.unlock() }
        defer { answer = nil }
        return answer
    }

    /// Waits until the write in hand is delivered, not for its store.
    ///
    /// Under exactly-once: its transaction committed and the next begun, or refused, so that what the loop sends from
    /// then on is the next checkpoint's. Returns at once with nothing in hand.
    func waitForDeliveries() {
        condition.lock()
        while inHand && delivery == nil { condition.wait() }
        let inFlight = delivery
        condition.unlock()
        inFlight?.waitUntilOver()
    }

    /// Waits for the answer to the write in hand, as long as `keepWaiting` says (asked every 100 ms): nil when it gave
    /// up first, or when nothing was handed over.
    func waitForAnswer(while keepWaiting: () -> Bool = { true }) -> Answer? {
        condition.lock()
        defer { condition.unlock() }
        while inHand && keepWaiting() { _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1)) }
        defer { answer = nil }
        return answer
    }

    /// Writes input offsets to the store by themselves, while no checkpoint is in hand: where a new assignment starts
    /// partitions the group had moved past the store (see ``PartitionHandover``).
    ///
    /// - Throws: a failure of the store.
    func writeOffsets(_ offsets: [TopicPartition: Int64]) throws(WorkerError) {
        guard !offsets.isEmpty else { return }
        condition.lock()
        precondition(!inHand, "offsets written beside a checkpoint in hand")
        condition.unlock()
        do {
            try store.commit(devices: [], offsets: offsets)
        } catch {
            throw WorkerError(.state, "cannot write the assigned partitions' start offsets", underlying: error)
        }
    }

    /// Writes a backlog to the store, while no checkpoint is in hand; returns the input offsets stored.
    ///
    /// Before the store is read: an assignment, a rewind.
    ///
    /// - Throws: a failure of the store.
    func storeBacklog(_ backlog: StoreBacklog) throws(WorkerError) -> [TopicPartition: Int64] {
        condition.lock()
        precondition(!inHand, "the backlog stored beside a checkpoint in hand")
        condition.unlock()
        guard !backlog.isEmpty else { return [:] }
        do {
            try store.commit(devices: backlog.devices.values, offsets: backlog.offsets) { backlog.spans }
        } catch {
            throw WorkerError(.state, "cannot write state", underlying: error)
        }
        return backlog.offsets
    }

    /// Lets the checkpoint in hand finish, then ends the writer's threads.
    func stop() {
        thread.stop()
        deliveryThread.stop()
    }

    /// Writes one checkpoint, stored or into the backlog.
    ///
    /// While the delivery thread waits for its records and then sends the changelog's (``CheckpointDelivery``), the
    /// changed devices' rows, the backlog's with them, go into one transaction, which commits devices and offsets once
    /// every record was delivered. Not storing, it waits for the deliveries and adds
    /// the checkpoint to the backlog.
    private func persist(
        _ checkpoint: Checkpoint,
        storing: Bool,
        backlog: StoreBacklog
    ) throws(WorkerError) -> Written {
        let devices = checkpoint.encodedDevices()
        let delivery = CheckpointDelivery(
            waitingFor: checkpoint.deliveries,
            thenSending: devices,
            to: checkpoint.changelog,
            confirming: checkpoint.membership,
            committing: checkpoint.transaction,
            offsets: checkpoint.offsets,
            on: deliveryThread
        )
        condition.lock()
        self.delivery = delivery
        condition.broadcast()
        condition.unlock()
        guard storing else {
            var unstored = backlog
            unstored.add(devices: devices, offsets: checkpoint.offsets, spans: try delivery.wait())
            return Written(
                logged: checkpoint.offsets,
                stored: nil,
                isComplete: checkpoint.isComplete,
                backlog: unstored
            )
        }
        let rows = backlog.rows(updatedBy: devices)
        let offsets = backlog.offsets.merging(checkpoint.offsets) { $1 }
        guard !rows.isEmpty || !offsets.isEmpty else {
            _ = try delivery.wait()
            return Written(logged: [:], stored: [:])
        }
        var refusal: WorkerError?
        var delivered: [Int32: OffsetSpan]?
        do {
            try store.commit(devices: rows, offsets: offsets) {
                do throws(WorkerError) {
                    delivered = try delivery.wait()
                    return backlog.spans(followedBy: delivered!)
                } catch {
                    refusal = error
                    return nil
                }
            }
        } catch {
            let failure = WorkerError(.state, "cannot write state", underlying: error)
            // Committed in Kafka, the checkpoint is the truth whatever the disk says: going back to the store would
            // send its events again.
            guard checkpoint.transaction != nil, let delivered, failure.isStorageFailure else { throw failure }
            var unstored = backlog
            unstored.add(devices: devices, offsets: checkpoint.offsets, spans: delivered)
            return Written(logged: checkpoint.offsets, stored: nil, storeFailure: failure, backlog: unstored)
        }
        if let refusal { throw refusal }
        CrashPoint.reached(.checkpointStored)
        return Written(logged: checkpoint.offsets, stored: offsets)
    }
}
