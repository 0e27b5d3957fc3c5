import Foundation
import GeoCore
import Kafka
import StateStore

/// Writes the worker's checkpoints on a thread of its own, one at a time and in order, so that the worker's
/// loop goes on applying messages while a checkpoint waits for its deliveries and for SQLite.
///
/// A checkpoint is written only once every record sent before it was taken has been delivered; then its
/// changed devices and next input offsets go into one transaction; then its `afterWrite` runs (the worker
/// commits the offsets to the consumer group there). That is the processing guarantee of
/// ARCHITECTURE.md, unchanged by the move to another thread: the stored state never covers a message whose
/// events are not delivered, and checkpoints reach the disk in the order they were taken.
///
/// The loop is at most one checkpoint ahead of the disk: ``submit(_:afterWrite:)`` first waits until the
/// previous checkpoint is written. Once a checkpoint fails, nothing later is written (a later one would
/// cover messages whose events were lost) and every call reports that first failure.
final class CheckpointWriter: @unchecked Sendable {
    // @unchecked: every mutable property below is guarded by `condition`.

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
    private let condition = NSCondition()
    private var queued: (checkpoint: Checkpoint, afterWrite: @Sendable ([TopicPartition: Int64]) -> Void)?
    private var isWriting = false
    private var isStopping = false
    private var hasExited = false
    private var failure: WorkerError?
    private var written: [PartitionKey: Int64]

    /// - Parameter storedOffsets: the offsets the store holds now.
    init(store: StateStore, storedOffsets: [PartitionKey: Int64]) {
        self.store = store
        self.written = storedOffsets
        let thread = Thread { [self] in writeUntilStopped() }
        thread.name = "geoworker-checkpoints"
        thread.start()
    }

    /// The next offset of every input partition as the store holds it (what a restart resumes from).
    var storedOffsets: [PartitionKey: Int64] {
        condition.lock()
        defer { condition.unlock() }
        return written
    }

    /// The failure that stopped the writing, if any. Cheap enough to ask once per poll.
    var failed: WorkerError? {
        condition.lock()
        defer { condition.unlock() }
        return failure
    }

    /// Hands a checkpoint to the writing thread, after waiting for the previous one to be written.
    ///
    /// - Parameter afterWrite: runs on the writing thread once the checkpoint is in the store, with its offsets.
    /// - Throws: the failure of an earlier checkpoint; this one is then dropped.
    func submit(
        _ checkpoint: Checkpoint,
        afterWrite: @escaping @Sendable ([TopicPartition: Int64]) -> Void = { _ in }
    ) throws(WorkerError) {
        condition.lock()
        defer { condition.unlock() }
        while queued != nil || isWriting, failure == nil { condition.wait() }
        if let failure { throw failure }
        precondition(!isStopping, "checkpoint submitted to a stopped CheckpointWriter")
        guard !checkpoint.isEmpty else { return }
        queued = (checkpoint, afterWrite)
        condition.broadcast()
    }

    /// Waits until every submitted checkpoint is written.
    ///
    /// - Throws: the failure that stopped the writing.
    func waitUntilWritten() throws(WorkerError) {
        condition.lock()
        defer { condition.unlock() }
        while queued != nil || isWriting, failure == nil { condition.wait() }
        if let failure { throw failure }
    }

    /// Lets the checkpoint in hand finish, then ends the writing thread.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        isStopping = true
        condition.broadcast()
        while !hasExited { condition.wait() }
    }

    private func writeUntilStopped() {
        while true {
            condition.lock()
            while queued == nil && !isStopping { condition.wait() }
            guard let (checkpoint, afterWrite) = queued, failure == nil else {
                hasExited = true
                condition.broadcast()
                condition.unlock()
                return
            }
            queued = nil
            isWriting = true
            condition.unlock()

            let result = Result { () throws(WorkerError) in try write(checkpoint) }
            if case .success = result { afterWrite(checkpoint.offsets) }

            condition.lock()
            isWriting = false
            switch result {
            case .success(let offsets): written.merge(offsets) { $1 }
            case .failure(let error): failure = error
            }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits for the deliveries, then writes the devices and offsets in one transaction; returns the offsets.
    private func write(_ checkpoint: Checkpoint) throws(WorkerError) -> [PartitionKey: Int64] {
        for batch in checkpoint.deliveries {
            if let failed = batch.wait().first(where: { !$0.isDelivered }) {
                throw WorkerError(
                    .delivery,
                    "could not deliver to \(failed.topic): \(failed.error.map { "\($0)" } ?? "")"
                )
            }
        }
        var offsets: [PartitionKey: Int64] = [:]
        for (partition, offset) in checkpoint.offsets {
            offsets[PartitionKey(topic: partition.topic, partition: partition.partition)] = offset
        }
        guard !checkpoint.devices.allSatisfy(\.isEmpty) || !offsets.isEmpty else { return [:] }
        do {
            try store.commit(devices: checkpoint.devices.joined(), offsets: offsets)
        } catch {
            throw WorkerError(.state, "cannot write state: \(error)")
        }
        return offsets
    }
}
