/// How long a test keeps looking for something it polls for: until `timeout` has passed on the clock *and* it has
/// looked at least as often as `timeout / interval` looks would take.
///
/// Swift Testing runs every test on a few shared threads. While long computing tests hold them, a waiting test is
/// not resumed for a while, and a deadline on the clock alone would pass before it had looked at all. That is
/// worst for a Kafka consumer: librdkafka hands it its partitions only from inside its poll, so a consumer not
/// polled is not even assigned. Counting the looks as well gives it its whole wait once it runs again, while a
/// wait that really fails still ends: on the clock when the test is scheduled normally, after the looks when not.
public struct WaitBudget: Sendable {
    private let deadline: ContinuousClock.Instant
    private let looks: Int
    private var looked = 0

    /// A wait of `timeout`, looking about every `interval` (a poll's timeout, a sleep between checks).
    public init(_ timeout: Duration, lookingEvery interval: Duration) {
        deadline = ContinuousClock.now + timeout
        looks = max(1, Int(timeout / interval))
    }

    /// Whether to look once more; counts the look when it says yes.
    public mutating func allowsAnotherLook() -> Bool {
        guard looked < looks || ContinuousClock.now < deadline else { return false }
        looked += 1
        return true
    }
}
