import Foundation
import GeoCore
import Kafka
import StateStore

/// Writes the worker's checkpoints on a thread of its own, so that the loop goes on applying messages while
/// a checkpoint waits for its deliveries and for SQLite.
///
/// A checkpoint is written only once every record sent before it was taken has been delivered; then its
/// changed devices and next input offsets go into one transaction. That is the processing guarantee of
/// docs/ARCHITECTURE.md, unchanged by the move to another thread: the stored state never covers a message
/// whose events are not delivered. The loop commits what the store holds to the consumer group itself, on the
/// consumer's thread (``storedOffsets``).
///
/// What may happen when is decided by ``CheckpointPipeline``; this type carries its actions out.
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: `pipeline` is guarded by `condition`; the rest is immutable.

    /// What one checkpoint covers.
    struct Checkpoint: Sendable {
        /// Everything sent since the previous checkpoint: events and dead letters.
        var deliveries: [DeliveryBatch] = []
        /// The devices changed since the previous checkpoint, as they were when it was taken: one list per
        /// shard, as each shard's registry gave it (joined only by the writer, so that taking a checkpoint
        /// copies no device on the loop).
        var devices: [[DeviceRegistry.ChangedDevice]] = []
        /// For each input partition with messages applied since the previous checkpoint, the next offset.
        var offsets: [TopicPartition: Int64] = [:]

        var isEmpty: Bool { deliveries.isEmpty && devices.allSatisfy(\.isEmpty) && offsets.isEmpty }
    }

    private let store: StateStore
    private let thread = DedicatedThread(name: "geoworker-checkpoints")
    private let condition = NSCondition()
    private var pipeline: CheckpointPipeline

    /// - Parameter storedOffsets: the offsets the store holds now.
    init(store: StateStore, storedOffsets: [TopicPartition: Int64]) {
        self.store = store
        self.pipeline = CheckpointPipeline(storedOffsets: storedOffsets)
    }

    /// The next offset of every input partition as the store holds it (what a restart resumes from).
    var storedOffsets: [TopicPartition: Int64] {
        condition.lock()
        defer { condition.unlock() }
        return pipeline.storedOffsets
    }

    /// The failure that stopped the writing, if any. Cheap enough to ask once per poll.
    var failed: WorkerError? {
        condition.lock()
        defer { condition.unlock() }
        return pipeline.failure
    }

    /// How many checkpoints have been written since the start.
    var writes: Int {
        condition.lock()
        defer { condition.unlock() }
        return pipeline.writes
    }

    /// After a refused delivery: the worker has rewound to the stored state and offsets, checkpoints may be
    /// written again.
    func rewound() {
        condition.lock()
        defer { condition.unlock() }
        pipeline.rewound()
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
    }

    /// On the writing thread: writes one checkpoint and tells the pipeline how it went.
    private func write(_ checkpoint: Checkpoint) {
        let result = Result { () throws(WorkerError) in try persist(checkpoint) }
        condition.lock()
        pipeline.writeFinished(result)
        condition.broadcast()
        condition.unlock()
    }

    /// Waits for the deliveries, then writes the devices and offsets in one transaction; returns the offsets.
    private func persist(_ checkpoint: Checkpoint) throws(WorkerError) -> [TopicPartition: Int64] {
        for batch in checkpoint.deliveries {
            let refused = batch.wait().filter { !$0.isDelivered }
            guard let first = refused.first else { continue }
            throw WorkerError(
                .delivery,
                "could not deliver \(refused.count) records to \(first.topic)",
                underlying: DeliveryRefusal(reports: refused)
            )
        }
        guard !checkpoint.devices.allSatisfy(\.isEmpty) || !checkpoint.offsets.isEmpty else { return [:] }
        do {
            try store.commit(devices: checkpoint.devices.joined(), offsets: checkpoint.offsets)
        } catch {
            throw WorkerError(.state, "cannot write state", underlying: error)
        }
        return checkpoint.offsets
    }
}
