import GeoCore
import Kafka
import StateStore

/// The devices this instance holds, split among its apply threads, and what survives when they are replaced: an
/// assignment loads its partitions' devices from the store, and a rewind after a refused delivery puts them back as
/// stored.
///
/// What the shards processed is summed in one ``ProcessingTally``, which outlives the shards it replaces.
///
/// Owned by the loop's thread; each shard's processor is its apply thread's while it processes
/// (``ApplyThreads``), so replacing or reading the shards comes after ``ApplyThreads/waitUntilApplied()``.
final class AssignedDevices {
    /// The shards: their queues are the loop's (it hands each released message to its shard's queue), the
    /// rest only after ``ApplyThreads/waitUntilApplied()``.
    var shards: ShardedDevices
    /// The input partition numbers whose devices are held.
    private(set) var partitions: Set<Int32> = []
    /// What every shard, current or replaced, processed: read from any thread.
    let tally = ProcessingTally()
    private let store: StateStore
    /// Splits devices among the apply threads, each with its processor, adding what they process to the tally.
    private let makeShards: ([DeviceState], ProcessingTally) -> ShardedDevices

    init(store: StateStore, makeShards: @escaping ([DeviceState], ProcessingTally) -> ShardedDevices) {
        self.store = store
        self.makeShards = makeShards
        // Devices are loaded per partition as the group assigns them.
        shards = makeShards([], tally)
    }

    /// Replaces the shards with the devices of these input partitions as stored.
    ///
    /// - Throws: ``WorkerError`` `state` when the store cannot be read; the shards are left as they were.
    func load(partitions: Set<Int32>) throws(WorkerError) {
        let states: [DeviceState]
        do {
            states = partitions.isEmpty ? [] : try store.loadDevices(partitions: partitions)
        } catch {
            throw WorkerError(.state, "cannot read the stored devices", underlying: error)
        }
        shards = makeShards(states, tally)
        self.partitions = partitions
    }

    /// Puts the held partitions' devices back as stored (a rewind).
    func reload() throws(WorkerError) {
        try load(partitions: partitions)
    }

    /// Answers the operations endpoints' waiting questions from the devices held (after
    /// ``ApplyThreads/waitUntilApplied()``).
    ///
    /// - Parameters:
    ///   - queries: the questions waiting.
    ///   - inputPartitionCount: the input topics' partition count, to say where a device not held is.
    ///   - catalog: the fleet's catalog, for its geofences in a view; nil when the worker reads none.
    func answer(_ queries: DeviceQueries, inputPartitionCount: Int, catalog: FleetCatalog?) {
        queries.answerPending { question in
            guard case .catalog(let view, let tag, let limit) = question else {
                return shards.answer(question, held: partitions, inputPartitionCount: inputPartitionCount)
            }
            guard let catalog else {
                return .notHeld("this instance reads no catalog: run it with --catalog (catalog.enabled)")
            }
            return .json(CatalogView(catalog.geofences, view: view, tag: tag, limit: limit).json())
        }
    }

    /// How many devices and tracked pins are held.
    var holdings: (devices: Int, pins: Int) { shards.holdings }
}
