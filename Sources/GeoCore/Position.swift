/// A device position update, as the positions topic carries it.
public struct Position: Hashable, Sendable {
    public let deviceId: String
    public let coordinate: Coordinate
    /// When the fix was taken, in milliseconds since the Unix epoch.
    public let timestamp: Int64
    /// Horizontal accuracy in metres (radius of 68 % confidence), when reported.
    public let accuracy: Double?
    /// Metres per second, when reported.
    public let speed: Double?
    /// Degrees clockwise from true north, 0..<360, when reported.
    public let heading: Double?
    /// The device user's preferred languages (BCP 47), most preferred first; empty when not reported.
    public let languages: [String]

    public init(
        deviceId: String,
        coordinate: Coordinate,
        timestamp: Int64,
        accuracy: Double? = nil,
        speed: Double? = nil,
        heading: Double? = nil,
        languages: [String] = []
    ) {
        self.deviceId = deviceId
        self.coordinate = coordinate
        self.timestamp = timestamp
        self.accuracy = accuracy
        self.speed = speed
        self.heading = heading
        self.languages = languages
    }
}

/// What a device asks of its tracked pins, as the commands topic carries it.
public enum DeviceCommand: Hashable, Sendable {
    /// Watch `pin` (replacing a pin with the same id).
    case track(deviceId: String, pin: Pin)
    /// Stop watching the pin with this id (no exit event).
    case untrack(deviceId: String, pinId: String)
    /// Stop watching every pin (no exit events).
    case untrackAll(deviceId: String)

    public var deviceId: String {
        switch self {
        case .track(let deviceId, _), .untrack(let deviceId, _), .untrackAll(let deviceId): deviceId
        }
    }
}

/// The Kafka message an input came from. Event ids derive from it, so reprocessing the same message
/// gives the same ids.
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

    /// The id of the `index`-th event this message caused: `topic:partition:offset:index`. Kafka topic
    /// names cannot contain `:`, so ids of different messages never collide.
    public func eventID(_ index: Int) -> String {
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
