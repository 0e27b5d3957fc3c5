import Synchronization

/// A Kafka topic's name, stored once for the life of the process and handed around as a pointer to its bytes.
///
/// Every input message carries its topic in its ``MessageOrigin``, and the origin is copied on its way through the
/// loop and the apply threads (into each event's numbering, for example). As a `String`, every copy of a long
/// name counted a reference on one object that all threads share: an atomic operation on a cache line the cores
/// pass back and forth. A `TopicName` is copied as a plain pointer. A process reads a handful of topics, so
/// keeping each name for good costs nothing.
public struct TopicName: Hashable, @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the bytes are never written after they are made, nor freed.
    /// The name's UTF-8 bytes; equal names share them, so equality is identity.
    private let bytes: UnsafeBufferPointer<UInt8>

    /// The process's one copy of `name` (made on first use).
    public init(_ name: String) {
        self = Self.interned.withLock { table in
            if let known = table[name] { return known }
            // At least a byte, so that even the empty name has an address of its own.
            let storage = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(1, name.utf8.count))
            _ = storage.initialize(from: name.utf8)
            let made = TopicName(bytes: UnsafeBufferPointer(start: storage.baseAddress, count: name.utf8.count))
            table[name] = made
            return made
        }
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    public var description: String { String(decoding: bytes, as: UTF8.self) }

    /// The name's UTF-8 bytes.
    public var utf8: UnsafeBufferPointer<UInt8> { bytes }

    public static func == (lhs: TopicName, rhs: TopicName) -> Bool { lhs.bytes.baseAddress == rhs.bytes.baseAddress }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes.baseAddress) }

    private static let interned = Mutex<[String: TopicName]>([:])
}
