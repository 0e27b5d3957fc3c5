/// Orders the records of one co-partitioned pair (positions partition p, commands partition p) by their
/// Kafka timestamps, the way Kafka Streams synchronises co-partitioned inputs.
///
/// Kafka orders messages only within a partition, so a `track` and a position for the same device have no
/// order between them until their timestamps give one. The merge hands out the earliest buffered record of
/// the pair (a command first on equal timestamps, so a pin tracked at the moment of a fix applies to it).
/// When one side has nothing buffered and is not known to be at its end, it waits up to `maximumWait` for
/// that side before going on without it, so a slow or empty side delays the other only by a bounded time.
/// Pure: the caller passes in the time and which sides are at their end.
struct PartitionPairMerge<Record> {
    enum Side: Hashable, Sendable {
        case positions
        case commands
    }

    private var positions = RecordQueue()
    private var commands = RecordQueue()
    /// Since when one side has been empty while the other had records waiting.
    private var waitingSince: ContinuousClock.Instant?

    var isEmpty: Bool { positions.isEmpty && commands.isEmpty }
    var count: Int { positions.count + commands.count }

    mutating func append(_ record: Record, timestamp: Int64, side: Side) {
        // A side that was empty has something again: no more waiting for it; the wait starts afresh the next
        // time a side runs dry.
        switch side {
        case .positions:
            if positions.isEmpty { waitingSince = nil }
            positions.append((record, timestamp))
        case .commands:
            if commands.isEmpty { waitingSince = nil }
            commands.append((record, timestamp))
        }
    }

    /// The next record to apply, or nil when there is none or the merge is waiting for the other side.
    ///
    /// - Parameters:
    ///   - positionsAtEnd, commandsAtEnd: the side's partition has been read to its end, so an empty side
    ///     has nothing earlier to give.
    mutating func next(
        positionsAtEnd: Bool,
        commandsAtEnd: Bool,
        now: ContinuousClock.Instant,
        maximumWait: Duration
    ) -> (record: Record, side: Side)? {
        switch (positions.first, commands.first) {
        case (nil, nil):
            return nil
        case (let position?, let command?):
            return command.timestamp <= position.timestamp
                ? (commands.removeFirst(), .commands) : (positions.removeFirst(), .positions)
        case (_?, nil):
            guard commandsAtEnd || waited(now: now, maximumWait: maximumWait) else { return nil }
            return (positions.removeFirst(), .positions)
        case (nil, _?):
            guard positionsAtEnd || waited(now: now, maximumWait: maximumWait) else { return nil }
            return (commands.removeFirst(), .commands)
        }
    }

    /// Drops everything buffered (the pair's partitions were revoked; their next owner reads them again).
    mutating func removeAll() {
        positions = RecordQueue()
        commands = RecordQueue()
        waitingSince = nil
    }

    private mutating func waited(now: ContinuousClock.Instant, maximumWait: Duration) -> Bool {
        guard let since = waitingSince else {
            waitingSince = now
            return maximumWait <= .zero
        }
        return now - since >= maximumWait
    }

    /// A FIFO of records: an array and a read index, compacted when the read part dominates.
    private struct RecordQueue {
        private var storage: [(record: Record, timestamp: Int64)] = []
        private var head = 0

        var isEmpty: Bool { head == storage.count }
        var count: Int { storage.count - head }
        var first: (record: Record, timestamp: Int64)? { isEmpty ? nil : storage[head] }

        mutating func append(_ element: (record: Record, timestamp: Int64)) { storage.append(element) }

        mutating func removeFirst() -> Record {
            let record = storage[head].record
            head += 1
            if head == storage.count {
                storage.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= storage.count {
                storage.removeFirst(head)
                head = 0
            }
            return record
        }
    }
}
