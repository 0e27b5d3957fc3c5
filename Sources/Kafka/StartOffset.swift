/// Where a consumer starts reading a partition it was given.
public enum StartOffset: Hashable, Sendable {
    /// The oldest message the broker still has.
    case beginning
    /// Only messages produced from now on.
    case end
    /// This exact offset: the offset of the next message to read.
    case offset(Int64)

    var rawValue: Int64 {
        switch self {
        case .beginning: return -2  // RD_KAFKA_OFFSET_BEGINNING
        case .end: return -1  // RD_KAFKA_OFFSET_END
        case .offset(let offset): return offset
        }
    }
}
