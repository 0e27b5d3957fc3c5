import Foundation
import GeoCore
import Kafka
import Metrics
import StateStore
import Threads

/// Writes the worker's checkpoints on a thread of its own, so that the loop goes on applying messages while
/// a checkpoint waits for its deliveries and for SQLite.
///
/// A checkpoint is written in the order of the processing guarantee (docs/ARCHITECTURE.md): every record
/// sent before it was taken delivered; then each changed device's record delivered to the changelog topic
/// (``DeviceChangelog``); then the changed devices, next input offsets and changelog offsets committed in one
/// SQLite transaction, whose device rows are written while those records are delivered
/// (``CheckpointDelivery``). So neither the changelog nor the store ever covers a message whose events are
/// not delivered, and a crash between any two steps replays into the same events with the same ids. What was
/// written is handed to the ``CheckpointCoordinator`` (``takeWritten()``), whose ``OffsetLedger`` says what
/// the store holds.
///
/// What may happen when is decided by ``CheckpointPipeline``; this type carries its actions out.
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: `pipeline` is guarded by `condition`; the rest is immutable.

    private let store: StateStore
    /// Behind the apply threads and the loop when the cores are busy: a checkpoint may take longer, an event not.
    private let thread = DedicatedThread(name: "gw-checkpoints", priority: .background)
    /// Where a checkpoint's deliveries are waited for and its changelog records sent (``CheckpointDelivery``).
    private let deliveryThread = DedicatedThread(name: "gw-deliveries")
    private let condition = NSCondition()
    private var pipeline = CheckpointPipeline()
    /// How long each checkpoint's writing took, refused or not.
    private let durations: Metrics.Timer

    init(store: StateStore, durations: Metrics.Timer) {
        self.store = store
        self.durations = durations
    }

    /// The failure that stopped the writing, if any.
    ///
    /// Cheap enough to ask once per poll.
    var failed: WorkerError? {
        condition.lock()
        defer { condition.unlock() }
        return pipeline.failure
    }

    /// Whether a checkpoint is being written (``CheckpointPipeline/isWriting``).
    ///
    /// Cheap enough to ask once per poll.
    var isWriting: Bool {
        condition.lock()
        defer { condition.unlock() }
        return pipeline.isWriting
    }

    /// The checkpoints written since the last call: how many, and the input offsets they stored.
    func takeWritten() -> CheckpointPipeline.Written {
        condition.lock()
        defer { condition.unlock() }
        return pipeline.takeWritten()
    }

    /// After a refused delivery: the worker has rewound to the stored state and offsets, checkpoints may be
    /// written again.
    func rewound() {
        condition.lock()
        defer { condition.unlock() }
        pipeline.rewound()
    }

    /// Writes input offsets to the store by themselves, once everything submitted is written: where a new
    /// assignment starts partitions the group had moved past the store (see ``PartitionHandover``).
    ///
    /// - Throws: a failure of the store (an earlier write's or this one's); a refused delivery is no reason
    ///   not to: the store stands as last written.
    func writeOffsets(_ offsets: [TopicPartition: Int64]) throws(WorkerError) {
        guard !offsets.isEmpty else { return }
        do {
            try waitUntilWritten()
        } catch  where error.isCheckpointRefusal {
            // A refused checkpoint wrote nothing: the store stands, and the rewind that follows goes back to it.
        }
        do {
            try store.commit(devices: [], offsets: offsets)
        } catch {
            throw WorkerError(.state, "cannot write the assigned partitions' start offsets", underlying: error)
        }
    }

    /// Hands a checkpoint to the writing thread, after waiting for the previous one to be written.
    ///
    /// - Throws: the failure of an earlier checkpoint; this one is then dropped.
    func submit(_ checkpoint: Checkpoint) throws(WorkerError) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch pipeline.submit(checkpoint) {
            case .write(let checkpoint):
                thread.execute { [self] in write(checkpoint) }
                return
            case .skip:
                return
            case .waitForWriter:
                condition.wait()
            case .fail(let error):
                throw error
            }
        }
    }

    /// Waits until every submitted checkpoint is written.
    ///
    /// - Throws: the failure that stopped the writing.
    func waitUntilWritten() throws(WorkerError) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            switch pipeline.waitUntilWritten() {
            case .done: return
            case .waitForWriter: condition.wait()
            case .fail(let error): throw error
            }
        }
    }

    /// Lets the checkpoint in hand finish, then ends the writing thread.
    func stop() {
        condition.lock()
        while case .waitForWriter = pipeline.stop() { condition.wait() }
        condition.unlock()
        thread.stop()
        deliveryThread.stop()
    }

    /// On the writing thread: writes one checkpoint and tells the pipeline how it went.
    private func write(_ checkpoint: Checkpoint) {
        let started = ContinuousClock.now
        let result = Result { () throws(WorkerError) in try persist(checkpoint) }
        durations.record(duration: ContinuousClock.now - started)
        condition.lock()
        pipeline.writeFinished(result)
        condition.broadcast()
        condition.unlock()
    }

    /// Writes the changed devices' rows while the delivery thread waits for the checkpoint's records and then
    /// sends the changelog's (``CheckpointDelivery``), and commits devices and offsets in one transaction once
    /// every one was delivered; returns the input offsets.
    private func persist(_ checkpoint: Checkpoint) throws(WorkerError) -> [TopicPartition: Int64] {
        let devices = checkpoint.encodedDevices()
        let delivery = CheckpointDelivery(
            waitingFor: checkpoint.deliveries,
            thenSending: devices,
            to: checkpoint.changelog,
            confirming: checkpoint.membership,
            on: deliveryThread
        )
        guard !devices.isEmpty || !checkpoint.offsets.isEmpty else {
            _ = try delivery.wait()
            return [:]
        }
        var refusal: WorkerError?
        do {
            try store.commit(devices: devices, offsets: checkpoint.offsets) {
                do throws(WorkerError) {
                    return try delivery.wait()
                } catch {
                    refusal = error
                    return nil
                }
            }
        } catch {
            throw WorkerError(.state, "cannot write state", underlying: error)
        }
        if let refusal { throw refusal }
        return checkpoint.offsets
    }
}
