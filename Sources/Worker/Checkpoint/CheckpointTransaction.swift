import Kafka
import PartitionOffsets

/// A checkpoint's Kafka transaction under exactly-once (``ProcessingGuarantee/exactlyOnce``): the last step of its
/// delivery, once its events, dead letters and changelog records are delivered into the open transaction.
///
/// The input offsets the checkpoint covers go into the transaction with the group consumer's metadata (member and
/// generation, KIP-447), the transaction commits, and the next one begins at once, so that whatever the apply threads
/// send next belongs to it. Anything short of a commit leaves the transaction to be aborted by the rewind that
/// follows the refusal (``KafkaClients/replaceProducers()``).
struct CheckpointTransaction: Sendable {
    /// The instance's one transactional producer: events, dead letters and the changelog.
    let producer: Producer
    /// The group's consumer, whose metadata the offsets are committed with.
    let consumer: Consumer
    /// How long a commit may keep trying through timeouts before the checkpoint is refused.
    let timeout: Duration

    /// Commits the open transaction with `offsets` (the next offset to read of each input partition it covers), then
    /// begins the next.
    ///
    /// - Throws: ``WorkerError`` `delivery` when the transaction did not commit (it must be aborted, and the worker
    ///   rewinds), `kafka` when the producer is done for (fenced by a newer instance with the same transactional id)
    ///   or the next transaction cannot begin.
    func commit(_ offsets: [TopicPartition: Int64]) throws(WorkerError) {
        guard !producer.lostConnectionDuringTransaction else {
            throw WorkerError(
                .delivery,
                """
                the connection to the brokers was lost during this checkpoint's transaction: it is aborted and \
                applied again, not committed (a broker that restarted may not have kept what the transaction holds)
                """
            )
        }
        let deadline = ContinuousClock.now + timeout
        do {
            try Producer.repeatingWhileRetriable(until: deadline) { () throws(KafkaError) in
                try producer.sendOffsetsToTransaction(offsets, of: consumer, timeout: timeout)
            }
            try Producer.repeatingWhileRetriable(until: deadline) { () throws(KafkaError) in
                try producer.commitTransaction(timeout: timeout)
            }
        } catch {
            throw Self.failure(error)
        }
        do {
            try producer.beginTransaction()
        } catch {
            // Committed, so not a refusal to go back from: the worker stops, and a restart restores the commit.
            throw WorkerError(.kafka, "cannot begin the transaction after a commit", underlying: error)
        }
    }

    /// What a failed commit means to the worker.
    static func failure(_ error: KafkaError) -> WorkerError {
        guard !error.isFatal else {
            return WorkerError(
                .kafka,
                """
                the transactional producer can go on no more (fenced by a newer instance with the same \
                groupInstanceId, or it lost its guarantees); the open transaction is aborted by the next start
                """,
                underlying: error
            )
        }
        return WorkerError(.delivery, "the checkpoint's transaction did not commit; it is aborted", underlying: error)
    }
}
