/// Where a writer's messages landed in one partition: the first offset, the offset after the last, and how many
/// there were.
///
/// When `count` equals `next - first`, nobody else wrote between them (``isContiguous``).
public struct OffsetSpan: Hashable, Sendable {
    /// The offset of the first message.
    public var first: Int64
    /// The offset after the last message.
    public var next: Int64
    /// How many messages landed in the span.
    public var count: Int

    /// A span of `count` messages from `first` to before `next`.
    public init(first: Int64, next: Int64, count: Int) {
        self.first = first
        self.next = next
        self.count = count
    }

    /// Whether the span holds nothing but these messages: no other writer's landed between them.
    public var isContiguous: Bool { next - first == Int64(count) }

    /// Adds a message that landed at `offset` to `span`, which starts with it when there is none yet.
    package static func include(_ offset: Int64, in span: inout OffsetSpan?) {
        guard let current = span else {
            span = OffsetSpan(first: offset, next: offset + 1, count: 1)
            return
        }
        span = OffsetSpan(
            first: min(current.first, offset),
            next: max(current.next, offset + 1),
            count: current.count + 1
        )
    }
}
