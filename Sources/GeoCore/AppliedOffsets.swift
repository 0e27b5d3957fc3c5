/// The offset of the last message applied to a device from each input topic, in its input partition;
/// -1 where none has been.
public struct AppliedOffsets: Hashable, Sendable {
    public var positions: Int64
    public var commands: Int64

    public init(positions: Int64 = -1, commands: Int64 = -1) {
        self.positions = positions
        self.commands = commands
    }

    public subscript(kind: InputKind) -> Int64 {
        get {
            switch kind {
            case .positions: positions
            case .commands: commands
            }
        }
        set {
            switch kind {
            case .positions: positions = newValue
            case .commands: commands = newValue
            }
        }
    }
}
