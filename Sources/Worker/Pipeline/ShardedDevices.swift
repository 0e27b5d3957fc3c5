import GeoCore
import Kafka

/// The worker's devices split among its apply threads (``WorkerConfiguration/applyThreadCount``): one
/// ``DeviceShard`` each, placed by ``DeviceRouting``.
///
/// The loop hands each message its merge releases to ``enqueue(_:kind:origin:streamTime:)`` in merge order; the shards
/// process them on their threads (``ApplyThreads``) while the loop reads and merges the next batch.
struct ShardedDevices {
    let shards: [DeviceShard]
    let routing: DeviceRouting
    /// Each shard's messages handed over by the loop, in merge order, not yet taken for applying.
    ///
    /// Kept here, in the loop's value, rather than in each shard object: queueing a message there was a retain and a
    /// release of the object, whose first cache line its apply thread was writing meanwhile, and an exclusivity check.
    private var pending: [[DeviceShard.Message]]

    /// - Parameters:
    ///   - states: the stored devices; each goes to the shard its messages will go to, whatever the
    ///     thread count was when it was stored.
    ///   - routing: which shard a device's messages go to.
    ///   - tally: where the shards add what they processed.
    ///   - makeProcessor: the processor of one shard, holding the given devices.
    init(
        states: [DeviceState],
        routing: DeviceRouting,
        tally: ProcessingTally,
        makeProcessor: ([DeviceState]) -> InputProcessor
    ) {
        var placed = Array(repeating: [DeviceState](), count: routing.shardCount)
        for state in states { placed[routing.shard(ofDevice: state.deviceId)].append(state) }
        self.routing = routing
        self.shards = placed.map { DeviceShard(processor: makeProcessor($0), tally: tally) }
        self.pending = Array(repeating: [], count: routing.shardCount)
    }

    var count: Int { shards.count }

    /// Queues a released message for its device's shard, with its pair's stream time before it.
    mutating func enqueue(
        _ record: consuming ConsumerRecord,
        kind: InputKind,
        origin: MessageOrigin,
        streamTime: Int64 = Int64.min
    ) {
        let route = record.withKeyAndValue { key, value in routing.route(key: key, value: value, kind: kind) }
        pending[route.shard].append(
            DeviceShard.Message(
                record: consume record,
                kind: kind,
                origin: origin,
                decoded: route.decoded,
                streamTime: streamTime
            )
        )
    }

    /// On the loop: each shard's messages queued since the last call, in merge order, for its apply thread
    /// (``ApplyThreads``).
    mutating func takePending() -> [[DeviceShard.Message]] {
        pending.indices.map { shard in
            var taken: [DeviceShard.Message] = []
            taken.reserveCapacity(pending[shard].count)
            swap(&pending[shard], &taken)
            return taken
        }
    }

    /// How many devices and tracked pins the shards hold.
    var holdings: (devices: Int, pins: Int) {
        shards.reduce(into: (devices: 0, pins: 0)) {
            $0.devices += $1.processor.registry.count
            $0.pins += $1.processor.registry.pinCount
        }
    }
}
