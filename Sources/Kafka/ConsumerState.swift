import CRdKafka
import Logging
import PartitionOffsets
import Synchronization

/// Which of a consumer's partitions it has read to their end, and the rebalance steps that change what it holds.
///
/// Updated on the polling thread, read from anywhere.
final class ConsumerState: Sendable {
    /// A partition as a message names it: by librdkafka topic handle, cheaper to hash than a topic name.
    struct MessagePartition: Hashable {
        let topic: UInt
        let partition: Int32
    }

    struct EndTracker {
        /// Partitions whose last event was "reached the end", by the key their messages carry, with the offset the
        /// event reported (the next to read).
        var atEnd: [MessagePartition: (partition: TopicPartition, end: Int64)] = [:]
        /// The partition of the last message read: a batch holds runs of one partition's messages, and only
        /// the first of a run needs the lookup.
        private var lastRead: MessagePartition?

        mutating func didRead(_ message: UnsafeMutablePointer<rd_kafka_message_t>) {
            // Most batches come while no partition is at its end; they skip the lookup.
            guard !atEnd.isEmpty else { return }
            let partition = MessagePartition(message)
            guard partition != lastRead else { return }
            lastRead = partition
            atEnd[partition] = nil
        }

        mutating func didReachEnd(_ message: UnsafeMutablePointer<rd_kafka_message_t>) -> TopicPartition {
            let partition = TopicPartition(
                String(cString: rd_kafka_topic_name(message.pointee.rkt)),
                message.pointee.partition
            )
            atEnd[MessagePartition(message)] = (partition, message.pointee.offset)
            lastRead = nil
            return partition
        }
    }

    private let tracker = Mutex(EndTracker())
    /// The hooks the caller of the poll or close under way gave it (``withHooks(_:_:)``): librdkafka runs the
    /// rebalance callback inside that call, on its thread, which alone reads and writes this.
    nonisolated(unsafe) private var hooksOfCall: RebalanceHooks?
    private let acknowledged = Mutex<[TopicPartition: Int64]>([:])

    var partitionsAtEnd: Set<TopicPartition> { tracker.withLock { Set($0.atEnd.values.map(\.partition)) } }

    /// The partitions at their end, each with the offset its end-of-partition event reported.
    var endOffsets: [TopicPartition: Int64] {
        tracker.withLock { Dictionary($0.atEnd.values.map { ($0.partition, $0.end) }) { $1 } }
    }

    func withEndTracking(_ body: (inout EndTracker) -> Void) {
        tracker.withLock { body(&$0) }
    }

    /// Offsets the group coordinator acknowledged, per partition (see ``Consumer/acknowledgedCommits``).
    var acknowledgedCommits: [TopicPartition: Int64] { acknowledged.withLock { $0 } }

    /// Records the partitions of a commit's answer that the coordinator accepted.
    func didCommit(_ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        let accepted = TopicPartition.offsets(from: list).filter { $0.2 == RD_KAFKA_RESP_ERR_NO_ERROR && $0.1 >= 0 }
        guard !accepted.isEmpty else { return }
        acknowledged.withLock { offsets in
            for (partition, offset, _) in accepted { offsets[partition] = offset }
        }
    }

    /// Forgets that these partitions were at their end: the consumer was sought elsewhere in them, and only a
    /// new end-of-partition event says it is at the end again.
    func forgetEnds(of partitions: some Sequence<TopicPartition>) {
        let moved = Set(partitions)
        tracker.withLock { $0.atEnd = $0.atEnd.filter { !moved.contains($0.value.partition) } }
    }

    /// Forgets the end state and the acknowledged commits of partitions the consumer no longer holds (or
    /// holds anew: meanwhile another member may have committed).
    func forget(_ partitions: [TopicPartition]) {
        let forgotten = Set(partitions)
        tracker.withLock { $0.atEnd = $0.atEnd.filter { !forgotten.contains($0.value.partition) } }
        acknowledged.withLock { $0 = $0.filter { !forgotten.contains($0.key) } }
    }

    /// Runs `body` (a poll, a close) with `hooks` as the rebalance hooks of whatever rebalance it serves.
    func withHooks<Result, Failure: Error>(
        _ hooks: RebalanceHooks,
        _ body: () throws(Failure) -> Result
    ) throws(Failure) -> Result {
        precondition(hooksOfCall == nil, "a poll or close inside a rebalance hook")
        hooksOfCall = hooks
        defer { hooksOfCall = nil }
        return try body()
    }

    /// Carries out a rebalance: the hooks of the call under way, else the consumer's own, then librdkafka's
    /// (incremental) assign or unassign.
    func rebalance(
        handle: OpaquePointer,
        err: rd_kafka_resp_err_t,
        partitions list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>,
        handler consumersOwn: RebalanceHandler,
        logger: Logger
    ) {
        let handler = hooksOfCall ?? RebalanceHooks(consumersOwn)
        // NULL when librdkafka cannot say (its group is going away as the consumer closes): the eager calls then,
        // whose refusal is logged as any other. Read as a string regardless, it crashed a worker stopped in a
        // rolling restart.
        let isCooperative = rd_kafka_rebalance_protocol(handle).map { String(cString: $0) } == "COOPERATIVE"
        let changed = TopicPartition.array(from: list)
        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            let starts = handler.assign(changed)
            for index in 0..<Int(list.pointee.cnt) {
                let element = list.pointee.elems + index
                let partition = TopicPartition(String(cString: element.pointee.topic), element.pointee.partition)
                if let offset = starts[partition] { element.pointee.offset = offset }
            }
            let failure =
                isCooperative
                ? incrementalError(rd_kafka_incremental_assign(handle, list))
                : assignError(rd_kafka_assign(handle, list))
            if let failure {
                logger.error("Assigning partitions failed", metadata: [KafkaLogKey.kafkaError: "\(failure)"])
                handler.revoke(changed, true)
                return
            }
            forget(changed)
            if let refused = Self.refusedAfterFatalError(changed, handle: handle) {
                logger.error(
                    "Partitions not assigned: the consumer has raised a fatal error (librdkafka takes the assignment as an unassignment)",
                    metadata: [KafkaLogKey.partitions: "\(refused.sorted())"]
                )
                handler.revoke(refused, true)
                return
            }
            logger.info("Partitions assigned", metadata: [KafkaLogKey.partitions: "\(changed.sorted())"])
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            handler.revoke(changed, rd_kafka_assignment_lost(handle) != 0)
            let failure =
                isCooperative
                ? incrementalError(rd_kafka_incremental_unassign(handle, list))
                : assignError(rd_kafka_assign(handle, nil))
            if let failure {
                logger.error("Revoking partitions failed", metadata: [KafkaLogKey.kafkaError: "\(failure)"])
            }
            forget(changed)
            logger.info("Partitions revoked", metadata: [KafkaLogKey.partitions: "\(changed.sorted())"])
        default:
            logger.error(
                "Rebalance failed; dropping the assignment",
                metadata: [KafkaLogKey.kafkaError: "\(KafkaError(err))"]
            )
            _ = rd_kafka_assign(handle, nil)
            tracker.withLock { $0.atEnd = [:] }
        }
    }

    /// The partitions of an assignment that librdkafka did not take although it answered without an error: once the
    /// consumer has raised a fatal error (a static member fenced by another with its `group.instance.id`), it takes
    /// every assignment as an unassignment (as it does while the consumer closes, when the owner is leaving anyway).
    private static func refusedAfterFatalError(
        _ partitions: [TopicPartition],
        handle: OpaquePointer
    ) -> [TopicPartition]? {
        guard rd_kafka_fatal_error(handle, nil, 0) != RD_KAFKA_RESP_ERR_NO_ERROR else { return nil }
        var list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?
        var held: Set<TopicPartition> = []
        if rd_kafka_assignment(handle, &list) == RD_KAFKA_RESP_ERR_NO_ERROR, let list {
            held = Set(TopicPartition.array(from: list))
            rd_kafka_topic_partition_list_destroy(list)
        }
        let refused = partitions.filter { !held.contains($0) }
        return refused.isEmpty ? nil : refused
    }

    private func assignError(_ err: rd_kafka_resp_err_t) -> KafkaError? {
        err == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(err)
    }

    private func incrementalError(_ error: OpaquePointer?) -> KafkaError? {
        error.map { KafkaError(consuming: $0) }
    }
}

extension ConsumerState.MessagePartition {
    init(_ message: UnsafeMutablePointer<rd_kafka_message_t>) {
        self.init(topic: UInt(bitPattern: message.pointee.rkt), partition: message.pointee.partition)
    }
}
