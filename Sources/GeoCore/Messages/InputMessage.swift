public import JSONCodec

/// Which of the two input topics a message comes from; the topic decides how its bytes are read.
public enum InputKind: Hashable, Sendable, CaseIterable {
    /// Device positions (``Position``).
    case positions
    /// Track and untrack commands (``DeviceCommand``).
    case commands
}

/// An input message, decoded: a position or a command.
public enum InputMessage: Hashable, Sendable {
    case position(Position)
    case command(DeviceCommand)

    /// Decodes a message's JSON bytes as its topic's kind of message.
    public static func decode(json bytes: UnsafeRawBufferPointer, as kind: InputKind) -> Result<Self, DecodingFailure> {
        switch kind {
        case .positions: Position.decode(json: bytes).map(Self.position)
        case .commands: DeviceCommand.decode(json: bytes).map(Self.command)
        }
    }

    /// Decodes a message's JSON bytes as its topic's kind of message, through `decoder`, which remembers what
    /// consecutive messages repeat.
    public static func decode(
        json bytes: UnsafeRawBufferPointer,
        as kind: InputKind,
        by decoder: inout InputDecoder
    ) -> Result<Self, DecodingFailure> {
        switch kind {
        case .positions: Position.decode(json: bytes, recent: &decoder.recentLanguages).map(Self.position)
        case .commands: DeviceCommand.decode(json: bytes).map(Self.command)
        }
    }

    public var deviceId: String {
        switch self {
        case .position(let position): position.deviceId
        case .command(let command): command.deviceId
        }
    }
}
