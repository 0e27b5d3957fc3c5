import GeoCore
import Kafka
import StateStore

/// Takes the worker back to its last written checkpoint, in process, after the broker refused a delivery:
/// the devices as the store holds them, and each assigned partition's reading back to where that state
/// ends. Applying and sending again from there re-emits the same events with the same ids (they derive from
/// the input offsets), so nothing is lost and no id names two events.
///
/// Also how an assignment loads its partitions' devices from the store.
struct CheckpointRewind {
    let store: StateStore
    /// Splits devices among the apply threads, each with its processor.
    let makeShards: ([DeviceState]) -> DeviceShards
    /// Where the assigned partitions read again from, from ``rewind(_:merge:checkpoints:)`` until
    /// ``resume(_:)``.
    private(set) var pendingOffsets: [TopicPartition: Int64] = [:]

    /// Takes the pipeline back to the last written checkpoint and returns the devices of the held
    /// `partitions` as stored: new
    /// producers (the old ones' queues purged, so nothing sent after the refused records gets out), the merges
    /// emptied, the checkpoints writable again, and the offsets to read again from noted for ``resume(_:)``.
    ///
    /// - Throws: ``WorkerError`` when a new producer cannot start or the store cannot be read.
    mutating func rewind(
        _ clients: inout KafkaClients,
        merge: inout InputMerge<ConsumerRecord>,
        checkpoints: CheckpointWriter,
        partitions: Set<Int32>
    ) throws(WorkerError) -> DeviceShards {
        try clients.replaceProducers()
        let shards = try storedShards(partitions: partitions)
        pendingOffsets = Self.offsets(
            assigned: clients.consumer.assignment,
            stored: checkpoints.storedOffsets,
            firstRead: merge.firstAppendedOffsets
        )
        merge.rewind()
        checkpoints.rewound()
        return shards
    }

    /// Moves the read positions of the partitions still assigned back to where ``rewind(_:merge:checkpoints:)``
    /// put the state, and forgets them.
    ///
    /// - Throws: ``KafkaError`` when a position cannot be moved (a partition revoked meanwhile: its next owner
    ///   starts at the stored offset anyway).
    mutating func resume(_ consumer: Consumer) throws(KafkaError) {
        defer { pendingOffsets = [:] }
        let assigned = consumer.assignment
        try consumer.seek(pendingOffsets.filter { assigned.contains($0.key) })
    }

    /// The devices of these input partitions as stored, split among the apply threads.
    ///
    /// - Throws: ``WorkerError`` `state` when the store cannot be read.
    func storedShards(partitions: Set<Int32>) throws(WorkerError) -> DeviceShards {
        guard !partitions.isEmpty else { return makeShards([]) }
        do {
            return makeShards(try store.loadDevices(partitions: partitions))
        } catch {
            throw WorkerError(.state, "cannot read the stored devices", underlying: error)
        }
    }

    /// Where each of the `assigned` partitions reads again from: its stored next offset, else (nothing stored
    /// for it yet) the first offset read from it since it was assigned. A partition with neither has given
    /// nothing, and its position is still where it started.
    static func offsets(
        assigned: Set<TopicPartition>,
        stored: [TopicPartition: Int64],
        firstRead: [TopicPartition: Int64]
    ) -> [TopicPartition: Int64] {
        var offsets: [TopicPartition: Int64] = [:]
        for partition in assigned {
            if let offset = stored[partition] ?? firstRead[partition] { offsets[partition] = offset }
        }
        return offsets
    }
}
