/// Exactly where a writer's messages landed in one partition: runs of consecutive offsets, in order.
///
/// Unlike an ``OffsetSpan`` (first, next, count), it never names an offset that another writer's message took between
/// two of these: a reader that leaves these offsets out leaves out nothing else. That is what an aborted transaction's
/// records need, where the partition's next owner may have written between them.
public struct OffsetRuns: Hashable, Sendable {
    /// The runs, in order, neither overlapping nor touching.
    public private(set) var runs: [Range<Int64>]

    /// The runs given, which must be in order and apart.
    public init(_ runs: [Range<Int64>] = []) {
        precondition(zip(runs, runs.dropFirst()).allSatisfy { $0.upperBound < $1.lowerBound }, "runs out of order")
        self.runs = runs.filter { !$0.isEmpty }
    }

    /// How many messages landed.
    public var count: Int { runs.reduce(0) { $0 + $1.count } }

    /// Whether a message landed at `offset`.
    public func contains(_ offset: Int64) -> Bool {
        let index = firstRun(endingAfter: offset)
        return index < runs.count && runs[index].contains(offset)
    }

    /// Adds a message that landed at `offset`.
    ///
    /// Delivery reports of a partition come in offset order, so this usually extends the last run.
    public mutating func insert(_ offset: Int64) {
        if let last = runs.last, last.upperBound <= offset {
            if last.upperBound == offset {
                runs[runs.count - 1] = last.lowerBound..<(offset + 1)
            } else {
                runs.append(offset..<(offset + 1))
            }
            return
        }
        let index = firstRun(endingAfter: offset)
        if index < runs.count, runs[index].contains(offset) { return }
        // `offset` comes before runs[index] and after runs[index - 1]: join whichever it touches.
        let joinsNext = index < runs.count && runs[index].lowerBound == offset + 1
        let joinsPrevious = index > 0 && runs[index - 1].upperBound == offset
        switch (joinsPrevious, joinsNext) {
        case (true, true):
            runs[index - 1] = runs[index - 1].lowerBound..<runs[index].upperBound
            runs.remove(at: index)
        case (true, false): runs[index - 1] = runs[index - 1].lowerBound..<(offset + 1)
        case (false, true): runs[index] = offset..<runs[index].upperBound
        case (false, false): runs.insert(offset..<(offset + 1), at: index)
        }
    }

    /// The index of the first run whose end is past `offset` (`runs.count` when there is none).
    private func firstRun(endingAfter offset: Int64) -> Int {
        var low = 0
        var high = runs.count
        while low < high {
            let middle = (low + high) / 2
            if runs[middle].upperBound <= offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
