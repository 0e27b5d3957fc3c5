/// What decoding one message after another keeps between them: the last languages list read (``RecentLanguages``),
/// which the next position listing the same text gets without allocating.
///
/// One per thread that decodes; the messages decode exactly as they would alone.
public struct InputDecoder: Sendable {
    var recentLanguages = RecentLanguages()

    public init() {}
}
