/// The partition a keyed record goes to under the two partitioners producers commonly use, so that a
/// service can say which partition holds a key without asking the producer.
public enum KeyPartitioner: String, Sendable, CaseIterable {
    /// librdkafka's default (`consistent_random`): CRC-32 of the key, modulo the partition count.
    case librdkafka
    /// The Java client's default: murmur2 of the key (Kafka's seed), made positive, modulo the count.
    case java

    /// The partition of `key` among `partitionCount` partitions.
    public func partition(of key: some Collection<UInt8>, partitionCount: Int) -> Int32 {
        precondition(partitionCount > 0, "a topic has at least one partition")
        switch self {
        case .librdkafka: return Int32(Self.crc32(key) % UInt32(partitionCount))
        case .java: return Int32((Self.murmur2(Array(key)) & 0x7fff_ffff) % UInt32(partitionCount))
        }
    }

    private static let crcTable: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    /// CRC-32 (IEEE 802.3, as zlib and librdkafka's `rd_crc32` compute it).
    static func crc32(_ bytes: some Collection<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    /// Kafka's murmur2 (its `Utils.murmur2`: seed 0x9747b28c, little-endian 4-byte blocks).
    static func murmur2(_ bytes: [UInt8]) -> UInt32 {
        let m: UInt32 = 0x5bd1_e995
        var h: UInt32 = 0x9747_b28c ^ UInt32(truncatingIfNeeded: bytes.count)
        let blocks = bytes.count / 4
        for block in 0..<blocks {
            let i = block * 4
            var k =
                UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
            k &*= m
            k ^= k >> 24
            k &*= m
            h &*= m
            h ^= k
        }
        let tail = blocks * 4
        switch bytes.count % 4 {
        case 3:
            h ^= UInt32(bytes[tail + 2]) << 16
            h ^= UInt32(bytes[tail + 1]) << 8
            h ^= UInt32(bytes[tail])
            h &*= m
        case 2:
            h ^= UInt32(bytes[tail + 1]) << 8
            h ^= UInt32(bytes[tail])
            h &*= m
        case 1:
            h ^= UInt32(bytes[tail])
            h &*= m
        default: break
        }
        h ^= h >> 13
        h &*= m
        h ^= h >> 15
        return h
    }
}
