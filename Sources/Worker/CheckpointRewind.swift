import GeoCore
import Kafka
import StateStore

/// Takes the worker back to its last written checkpoint, in process, after the broker refused a delivery:
/// the devices as the store holds them, and each assigned partition's reading back to where that state
/// ends. Applying and sending again from there re-emits the same events with the same ids (they derive from
/// the input offsets), so nothing is lost and no id names two events.
///
/// Also how the worker first loads its devices: a start is a rewind to the stored state.
struct CheckpointRewind {
    let store: StateStore
    /// Splits devices among the apply threads, each with its processor.
    let makeShards: ([DeviceState]) -> DeviceShards

    /// The devices as stored, split among the apply threads.
    ///
    /// - Throws: ``WorkerError`` `state` when the store cannot be read.
    func storedShards() throws(WorkerError) -> DeviceShards {
        do {
            return makeShards(try store.loadDevices())
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
