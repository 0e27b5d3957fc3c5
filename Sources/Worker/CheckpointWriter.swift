import Foundation
import GeoCore
import Kafka
import StateStore

/// Writes the worker's checkpoints on a thread of its own, so that the loop goes on applying messages while
/// a checkpoint waits for its deliveries and for SQLite.
///
/// A checkpoint is written in the order of the processing guarantee (docs/ARCHITECTURE.md): every record
/// sent before it was taken delivered; then each changed device's record delivered to the changelog topic
/// (``DeviceChangelog``); then the changed devices, next input offsets and changelog offsets committed in one
/// SQLite transaction, whose device rows are written while those records are delivered
/// (``CheckpointDelivery``). So neither the changelog nor the store ever covers a message whose events are
/// not delivered, and a crash between any two steps replays into the same events with the same ids. The loop
/// commits what the store holds to the consumer group itself, on the consumer's thread (``storedOffsets``).
///
/// What may happen when is decided by ``CheckpointPipeline``; this type carries its actions out.
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: `pipeline` is guarded by `condition`; the rest is immutable.

    /// What one checkpoint covers.
    struct Checkpoint: Sendable {
        /// Everything sent since the previous checkpoint: events and dead letters.
        var deliveries: [DeliveryBatch] = []
        /// The devices changed since the previous checkpoint, as they were when it was taken, encoded: one
        /// list per shard, each in device-id order (encoded and sorted by the shards on their threads, all at
        /// once: ``DeviceShard/encodeChanges()``).
        var devices: [[EncodedDevice]] = []
        /// For each input partition with messages applied since the previous checkpoint, the next offset.
        var offsets: [TopicPartition: Int64] = [:]
        /// Where the changed devices' records go, through the worker's producer of the moment; nil when the
        /// worker runs without a changelog.
        var changelog: DeviceChangelog.Sink?

        var isEmpty: Bool { deliveries.isEmpty && devices.allSatisfy(\.isEmpty) && offsets.isEmpty }
    }

    private let store: StateStore
    private let thread = DedicatedThread(name: "geoworker-checkpoints")
    /// Where a checkpoint's deliveries are waited for and its changelog records sent (``CheckpointDelivery``).
    private let deliveryThread = DedicatedThread(name: "geoworker-ckpt-delivery")
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

    /// Moves the store's progress for these partitions up to where a new assignment starts them (see
    /// ``PartitionHandover/Assignment/advanced``), once everything submitted is written.
    ///
    /// - Throws: a failure of the store (an earlier write's or this one's); a refused delivery is no reason
    ///   not to: the store stands as last written.
    func advanceStoredOffsets(_ offsets: [TopicPartition: Int64]) throws(WorkerError) {
        guard !offsets.isEmpty else { return }
        do {
            try waitUntilWritten()
        } catch  where error.code == .delivery {
            // A refused checkpoint wrote nothing: the store stands, and the rewind that follows goes back to it.
        }
        do {
            try store.commit(devices: [], offsets: offsets)
        } catch {
            throw WorkerError(.state, "cannot write the assigned partitions' start offsets", underlying: error)
        }
        condition.lock()
        defer { condition.unlock() }
        pipeline.advanceStoredOffsets(offsets)
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
        let result = Result { () throws(WorkerError) in try persist(checkpoint) }
        condition.lock()
        pipeline.writeFinished(result)
        condition.broadcast()
        condition.unlock()
    }

    /// Writes the changed devices' rows while the delivery thread waits for the checkpoint's records and then
    /// sends the changelog's (``CheckpointDelivery``), and commits devices and offsets in one transaction once
    /// every one was delivered; returns the input offsets.
    private func persist(_ checkpoint: Checkpoint) throws(WorkerError) -> [TopicPartition: Int64] {
        let devices = Array(checkpoint.devices.joined())
        let delivery = CheckpointDelivery(
            waitingFor: checkpoint.deliveries,
            thenSending: devices,
            to: checkpoint.changelog,
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
