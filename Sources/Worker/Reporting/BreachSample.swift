/// What a run-time check collected between two reports: how many breaches, and the first few to log.
struct BreachSample<Entry: CustomStringConvertible> {
    private(set) var first: [Entry] = []
    private(set) var count = 0

    /// Counts a breach; `entry` is made only for the first 16 of a report.
    mutating func note(_ entry: () -> Entry) {
        count += 1
        if first.count < 16 { first.append(entry()) }
    }

    /// What was collected since the last call; starts afresh.
    mutating func take() -> BreachSample {
        defer { self = BreachSample() }
        return self
    }
}
