import GeoCore
import JSONCodec

/// Which shard (the devices one apply thread applies) a device belongs to, and so where each input message goes.
///
/// A device is placed by a hash of its id: for a message, of its Kafka key, which the message contract makes
/// the device id, so that routing needs no decoding. Which partitions a device's messages come from does not
/// matter, so a device whose positions and commands arrive on different partition numbers (producers with
/// different partitioners) still has one state. A message without a key is decoded to find its device id,
/// and the decoded message travels with it so that it is not decoded again; one that cannot be decoded goes
/// to shard 0, which dead-letters it.
///
/// Pure: stored devices are placed with ``shard(ofDevice:)`` and their messages with ``route(key:value:kind:)``,
/// by the same hash within one process (the seed is per process: nothing outside it sees the placement).
struct DeviceRouting: Sendable {
    let shardCount: Int
    let hashing: IDHashing

    init(shardCount: Int, hashing: IDHashing = .random()) {
        precondition(shardCount > 0, "at least one shard")
        self.shardCount = shardCount
        self.hashing = hashing
    }

    /// Where a message goes.
    struct Route {
        let shard: Int
        /// The message as routing decoded it (keyless messages only), for its shard to apply.
        let decoded: Result<InputMessage, DecodingFailure>?
    }

    /// The shard of a stored device.
    func shard(ofDevice deviceId: String) -> Int {
        shardCount == 1 ? 0 : shard(ofHash: hashing.hash(deviceId))
    }

    /// The shard of a message: by its key, else by the device id in its payload.
    func route(key: UnsafeRawBufferPointer?, value: UnsafeRawBufferPointer?, kind: InputKind) -> Route {
        guard shardCount > 1 else { return Route(shard: 0, decoded: nil) }
        if let key, key.count > 0 { return Route(shard: shard(ofHash: hashing.hash(key)), decoded: nil) }
        guard let value, value.count > 0 else { return Route(shard: 0, decoded: nil) }
        let decoded = InputMessage.decode(json: value, as: kind)
        switch decoded {
        case .success(let message): return Route(shard: shard(ofDevice: message.deviceId), decoded: decoded)
        case .failure: return Route(shard: 0, decoded: decoded)
        }
    }

    private func shard(ofHash hash: UInt64) -> Int {
        Int(hash % UInt64(shardCount))
    }
}
