import Foundation
import GeoCore
import Kafka
import PartitionOffsets
import Threads

/// The delivery half of writing one checkpoint, on a thread of its own: waits until every record the checkpoint
/// covers (events, dead letters) is delivered, then sends the changed devices to the changelog topic, while
/// the checkpoint thread writes the same devices' SQLite rows; ``wait()`` says when the changelog records
/// are delivered too, and where they landed.
///
/// Before it sends them it asks the group whether this instance still holds its partitions (``MembershipCheck``).
/// Under exactly-once it then commits the checkpoint's transaction with the input offsets it covers
/// (``CheckpointTransaction``): the events, dead letters and changelog records become visible to `read_committed`
/// readers together, and the rows are committed to SQLite only after that.
///
/// Two threads because at the end of a catch-up the checkpoint is all that runs: waiting for the events,
/// sending the changelog records and writing the rows one after another on one core would leave the other
/// core idle. The order the processing guarantee needs still holds: the changelog records go out only
/// once the events are delivered, and the rows are committed only once the changelog records are.
final class CheckpointDelivery: @unchecked Sendable {
    // @unchecked: `outcome` is guarded by `condition`.
    private let condition = NSCondition()
    private var outcome: Result<DeliveryBatch?, WorkerError>?
    /// Whether it commits a transaction (under exactly-once).
    private let committing: Bool

    /// Starts on `thread`: waits for `deliveries`, then, once `membership` is confirmed, sends each of `devices` to
    /// the changelog (when there is one and they are delivered); with a `transaction`, commits it with `offsets` once
    /// those are delivered too.
    init(
        waitingFor deliveries: [DeliveryBatch],
        thenSending devices: [EncodedDevice],
        to changelog: DeviceChangelog.Sink?,
        confirming membership: MembershipCheck?,
        committing transaction: CheckpointTransaction? = nil,
        offsets: [TopicPartition: Int64] = [:],
        on thread: DedicatedThread
    ) {
        committing = transaction != nil
        thread.execute { [self] in
            let sent = Result { () throws(WorkerError) -> DeliveryBatch? in
                for batch in deliveries { try Self.checkDelivered(batch) }
                let sendsRecords = changelog != nil && !devices.isEmpty
                // Asked before anything of the checkpoint is written or committed.
                if sendsRecords || transaction != nil { try membership?.confirm(sendingRecords: sendsRecords) }
                var records: DeliveryBatch?
                if let changelog, sendsRecords { records = changelog.producer.send(changelog.records(for: devices)) }
                if let transaction {
                    if let records { try Self.checkDelivered(records) }
                    CrashPoint.reached(.changelogDelivered)
                    try transaction.commit(offsets)
                    CrashPoint.reached(.transactionCommitted)
                }
                return records
            }
            condition.lock()
            outcome = sent
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits until the deliveries, and under exactly-once the transaction's commit, are over, refused or not.
    func waitUntilOver() {
        condition.lock()
        while outcome == nil { condition.wait() }
        condition.unlock()
    }

    /// Waits until the checkpoint's records and then its changelog records are delivered; returns, for each
    /// changelog partition written to, where they landed.
    ///
    /// - Throws: ``WorkerError`` `delivery` with the ``DeliveryRefusal`` when the broker refused any record,
    ///   `fenced` when the group had given the partitions to another member before the changelog was written.
    func wait() throws(WorkerError) -> [Int32: OffsetSpan] {
        condition.lock()
        while outcome == nil { condition.wait() }
        let outcome = outcome!
        condition.unlock()
        guard let changelog = try outcome.get() else { return [:] }
        try Self.checkDelivered(changelog)
        if !committing { CrashPoint.reached(.changelogDelivered) }
        return DeviceChangelog.spans(of: changelog)
    }

    /// Waits until every record of `batch` has its delivery report.
    ///
    /// - Throws: ``WorkerError`` `delivery` with the ``DeliveryRefusal`` when the broker refused any record.
    private static func checkDelivered(_ batch: DeliveryBatch) throws(WorkerError) {
        let refused = batch.waitForRefusals()
        guard let first = refused.first else { return }
        throw WorkerError(
            .delivery,
            "could not deliver \(refused.count) records to \(first.topic)",
            underlying: DeliveryRefusal(reports: refused)
        )
    }
}
