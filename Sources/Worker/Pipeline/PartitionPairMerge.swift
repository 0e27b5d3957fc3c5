import GeoCore

/// Orders the records of one co-partitioned pair (positions partition p, commands partition p) by their
/// Kafka timestamps, the way Kafka Streams synchronises co-partitioned inputs.
///
/// Kafka orders messages only within a partition, so a `track` and a position for the same device have no
/// order between them until their timestamps give one. The merge hands out the earliest buffered record of
/// the pair (a command first on equal timestamps, so a pin tracked at the moment of a fix applies to it).
/// When one side has nothing buffered and is not known to be at its end, it waits up to `maximumWait` for
/// that side before going on without it, so a slow or empty side delays the other only by a bounded time.
/// A side that has given nothing at all since the pair was assigned (or since ``removeAll()``) is waited for
/// longer, up to `unfetchedSideWait`: right after an assignment one partition's first fetch can come well
/// after its partner's, and going on without it would apply positions before older commands.
/// Pure: the caller passes in the time and which sides are at their end.
struct PartitionPairMerge<Record> {
    private var positions = RecordQueue()
    private var commands = RecordQueue()
    /// Since when one side has been empty while the other had records waiting.
    private var waitingSince: ContinuousClock.Instant?
    /// Whether each side has given a record since the pair was assigned.
    private var positionsFetched = false
    private var commandsFetched = false

    var isEmpty: Bool { positions.isEmpty && commands.isEmpty }

    mutating func append(_ record: Record, timestamp: Int64, side: InputKind) {
        // A side that was empty has something again: no more waiting for it; the wait starts afresh the next
        // time a side runs dry.
        switch side {
        case .positions:
            if positions.isEmpty { waitingSince = nil }
            positions.append((record, timestamp))
            positionsFetched = true
        case .commands:
            if commands.isEmpty { waitingSince = nil }
            commands.append((record, timestamp))
            commandsFetched = true
        }
    }

    /// The next record to apply, or nil when there is none or the merge is waiting for the other side.
    ///
    /// - Parameters:
    ///   - positionsAtEnd: the positions partition has been read to its end, so an empty positions side has
    ///     nothing earlier to give.
    ///   - commandsAtEnd: the same of the commands partition.
    ///   - now: the time the waits are measured by.
    ///   - maximumWait: how long an empty side that has given records before is waited for.
    ///   - unfetchedSideWait: how long an empty side that has given nothing since the assignment is waited for.
    /// - Returns: the record, its side and its timestamp; nil when there is none to give now.
    mutating func next(
        positionsAtEnd: Bool,
        commandsAtEnd: Bool,
        now: ContinuousClock.Instant,
        maximumWait: Duration,
        unfetchedSideWait: Duration
    ) -> (record: Record, side: InputKind, timestamp: Int64)? {
        // By timestamps alone: looking at a record copies it, a retain and a release of what it holds.
        switch (positions.firstTimestamp, commands.firstTimestamp) {
        case (nil, nil):
            return nil
        case (let position?, let command?):
            return command <= position
                ? (commands.removeFirst(), .commands, command) : (positions.removeFirst(), .positions, position)
        case (let position?, nil):
            let wait = commandsFetched ? maximumWait : unfetchedSideWait
            guard commandsAtEnd || waited(now: now, maximumWait: wait) else { return nil }
            return (positions.removeFirst(), .positions, position)
        case (nil, let command?):
            let wait = positionsFetched ? maximumWait : unfetchedSideWait
            guard positionsAtEnd || waited(now: now, maximumWait: wait) else { return nil }
            return (commands.removeFirst(), .commands, command)
        }
    }

    /// Drops everything buffered and forgets what was fetched (the pair's partitions were revoked; their next
    /// owner, this worker again after an eager rebalance included, reads them again).
    mutating func removeAll() {
        self = PartitionPairMerge()
    }

    private mutating func waited(now: ContinuousClock.Instant, maximumWait: Duration) -> Bool {
        guard let since = waitingSince else {
            waitingSince = now
            return maximumWait <= .zero
        }
        return now - since >= maximumWait
    }

    /// A FIFO of records: an array and a read index, compacted when the read part dominates.
    ///
    /// A record leaves by moving out of its slot (which then holds nil), not by a copy that the slot would release
    /// later.
    private struct RecordQueue {
        private var storage: [(record: Record?, timestamp: Int64)] = []
        private var head = 0

        var isEmpty: Bool { head == storage.count }
        var firstTimestamp: Int64? { isEmpty ? nil : storage[head].timestamp }

        mutating func append(_ element: (record: Record, timestamp: Int64)) { storage.append(element) }

        mutating func removeFirst() -> Record {
            let record = storage[head].record.take()!
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
