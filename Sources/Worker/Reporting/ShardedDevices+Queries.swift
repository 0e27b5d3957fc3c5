import GeoCore
import Kafka

extension ShardedDevices {
    /// Answers an operations endpoint's question from the devices held (on the loop's thread, between
    /// batches).
    ///
    /// - Parameters:
    ///   - question: what the endpoint asks.
    ///   - held: the input partition numbers whose devices this instance holds.
    ///   - inputPartitionCount: the input topics' partition count, to say where a device not held is.
    /// - Returns: what to send, or where the device is when it is not held here.
    func answer(
        _ question: DeviceQueries.Question,
        held: Set<Int32>,
        inputPartitionCount: Int
    ) -> DeviceQueries.Answer {
        switch question {
        case .statusCard(let deviceId, let now):
            let shard = shards[routing.shard(ofDevice: deviceId)]
            if let card = shard.processor.registry.statusCard(of: deviceId, now: now) { return .json(card.json()) }
            return .notHeld(Self.whereIs(deviceId, held: held, inputPartitionCount: inputPartitionCount))
        case .map(let view, let limit):
            for shard in shards { shard.updateLastFixes() }
            let registries = shards.map(\.processor.registry)
            return .json(DeviceMapSelection(view: view, limit: limit, from: registries).json())
        case .nearby(let center, let radius, let limit):
            for shard in shards { shard.updateLastFixes() }
            let registries = shards.map(\.processor.registry)
            return .nearby(DeviceNearbySelection(center: center, radius: radius, limit: limit, from: registries))
        case .catalog:
            preconditionFailure("the catalog is no shard's: AssignedDevices answers it")
        }
    }

    /// Where a device's messages go, by the partitioners producers commonly use, and what this instance
    /// holds: the input topics are keyed by device id, so the partition follows from the id.
    static func whereIs(_ deviceId: String, held: Set<Int32>, inputPartitionCount count: Int) -> String {
        let heldText = held.isEmpty ? "none" : held.sorted().map(String.init).joined(separator: ", ")
        let key = Array(deviceId.utf8)
        let native = KeyPartitioner.librdkafka.partition(of: key, partitionCount: count)
        let java = KeyPartitioner.java.partition(of: key, partitionCount: count)
        if held.contains(native) && held.contains(java) {
            return "device \(deviceId) is unknown: this instance holds its input partition (\(native) of \(count)) "
                + "and has applied no message of it"
        }
        let partitions =
            native == java
            ? "input partition \(native)"
            : "input partition \(native) (librdkafka's partitioner) or \(java) (the Java client's)"
        return "device \(deviceId) is not held by this instance: its messages go to \(partitions) of \(count), "
            + "and this instance holds input partitions: \(heldText)"
    }
}
