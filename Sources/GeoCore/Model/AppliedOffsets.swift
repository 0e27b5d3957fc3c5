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

    /// Whether a state with these offsets reflects less of its input than one with `other`: no more of either topic,
    /// and not the same.
    ///
    /// One device's messages are applied in one order wherever it is processed (the merge is deterministic), and both
    /// offsets only grow along it, so of two states of one device the one that precedes is the older. A restore keeps
    /// the newer whatever order the records came in.
    public func precedes(_ other: AppliedOffsets) -> Bool {
        positions <= other.positions && commands <= other.commands && self != other
    }
}
