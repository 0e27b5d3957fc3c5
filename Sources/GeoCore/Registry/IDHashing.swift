/// The hash of a device id: 64-bit multiply-xorshift mixing over its UTF-8 bytes, 8 at a time.
///
/// The project's one device-id hash: the registry's index finds devices by it, and the worker splits devices among its
/// apply threads by it (each with its own seed, so that the ids of one thread still spread over the whole index).
public struct IDHashing: Sendable {
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
    }

    /// A hashing with a seed drawn at random: ids cannot be crafted to collide on purpose, and nothing
    /// outside this process sees the values.
    public static func random() -> IDHashing {
        var generator = SystemRandomNumberGenerator()
        return IDHashing(seed: generator.next())
    }

    public func hash(_ id: String) -> UInt64 {
        var id = id
        return id.withUTF8 { hash(UnsafeRawBufferPointer($0)) }
    }

    /// The hash of an id given as its UTF-8 bytes (a Kafka message key, read in place).
    public func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash = seed ^ (UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = Self.mix(hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        return Self.mix(Self.mix(hash ^ tail) ^ seed)
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        x = (x ^ (x >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return x ^ (x >> 32)
    }
}
