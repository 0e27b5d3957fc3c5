/// The Kafka message an input came from.
///
/// Event ids derive from it, so reprocessing the same message gives the same ids.
public struct MessageOrigin: Hashable, Sendable {
    public let topicName: TopicName
    public let partition: Int32
    public let offset: Int64
    /// The Kafka message timestamp in milliseconds since the epoch: the time of commands, which carry none.
    public let timestamp: Int64

    public init(topic: TopicName, partition: Int32, offset: Int64, timestamp: Int64) {
        self.topicName = topic
        self.partition = partition
        self.offset = offset
        self.timestamp = timestamp
    }

    /// Looks the topic's ``TopicName`` up: the hot path names its topics once and uses the other initializer.
    public init(topic: String, partition: Int32, offset: Int64, timestamp: Int64) {
        self.init(topic: TopicName(topic), partition: partition, offset: offset, timestamp: timestamp)
    }

    public var topic: String { topicName.description }

    /// The id of the `index`-th event this message caused: `topic:partition:offset:index`.
    ///
    /// Kafka topic names cannot contain `:`, so ids of different messages never collide.
    public func eventId(_ index: Int) -> String {
        // Written byte by byte into one allocation: the interpolation grew its string and converted each
        // number through a string of its own, for every event.
        let name = topicName.utf8
        // Three separators and at most 20 characters per number.
        return String(unsafeUninitializedCapacity: name.count + 3 + 3 * 20) { buffer in
            var end = name.count
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: UnsafeRawBufferPointer(name))
            end = Self.writeSeparatedDecimal(Int64(partition), into: buffer, at: end)
            end = Self.writeSeparatedDecimal(offset, into: buffer, at: end)
            return Self.writeSeparatedDecimal(Int64(index), into: buffer, at: end)
        }
    }

    /// Writes `:` and `number` in decimal at `start`; returns the index after them.
    private static func writeSeparatedDecimal(
        _ number: Int64,
        into buffer: UnsafeMutableBufferPointer<UInt8>,
        at start: Int
    ) -> Int {
        buffer[start] = UInt8(ascii: ":")
        var position = start + 1
        if number < 0 {
            buffer[position] = UInt8(ascii: "-")
            position += 1
        }
        var magnitude = number.magnitude
        let digitsStart = position
        repeat {
            buffer[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
            position += 1
        } while magnitude > 0
        buffer[digitsStart..<position].reverse()
        return position
    }
}
