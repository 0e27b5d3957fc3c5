import GeoCore

/// Orders the records of one co-partitioned pair (positions partition p, commands partition p) by their
/// Kafka timestamps, the way Kafka Streams synchronises co-partitioned inputs (with KIP-695's rule for a side
/// that is late).
///
/// Kafka orders messages only within a partition, so a `track` and a position for the same device have no
/// order between them until their timestamps give one. The merge hands out the earliest buffered record of
/// the pair (a command first on equal times, so a pin tracked at the moment of a fix applies to it). When one
/// side has nothing buffered, what happens depends on what is known of its partition (``Side``):
/// - read to its end: it has nothing earlier to give, and the other side goes on at once;
/// - **lagging**: it holds more than was read (its high watermark, as librdkafka last saw it, is beyond the next
///   offset), or it has given nothing since the pair was assigned: it is waited for, up to `laggingSideWait`, so
///   that the events do not depend on which partition's fetch came first; a wait that reaches the bound is
///   counted (``laggingWaitsGivenUp``) and the other side goes on;
/// - caught up as far as anyone knows: it is waited for up to `maximumWait` (`mergeWait`), the time a record just
///   produced may take to arrive.
/// Pure: the caller passes in the time and what it knows of each side's partition.
struct PartitionPairMerge<Record> {
    /// What the caller knows of one side's partition beyond what the pair holds.
    struct Side {
        /// The partition has been read to its end.
        var atEnd = false
        /// The partition's high watermark as librdkafka last saw it (nil: not known).
        var highWatermark: Int64? = nil
    }

    private var positions = RecordQueue()
    private var commands = RecordQueue()
    /// Since when one side has been empty while the other had records waiting.
    private var waitingSince: ContinuousClock.Instant?
    /// The lagging side whose wait reached its bound: not waited for again until it gives a record.
    private var givenUpOn: InputKind?
    /// The offset after the last record each side gave since the pair was assigned; nil while it gave none.
    private var positionsNext: Int64?
    private var commandsNext: Int64?
    /// How many times a lagging side's wait reached its bound and the other side went on without it.
    private(set) var laggingWaitsGivenUp = 0

    var isEmpty: Bool { positions.isEmpty && commands.isEmpty }

    mutating func append(_ record: Record, offset: Int64, timestamp: Int64, side: InputKind) {
        // A side that was empty has something again: no more waiting for it; the wait starts afresh the next
        // time a side runs dry.
        switch side {
        case .positions:
            if positions.isEmpty { waitingSince = nil }
            positions.append((record, timestamp))
            positionsNext = offset + 1
        case .commands:
            if commands.isEmpty { waitingSince = nil }
            commands.append((record, timestamp))
            commandsNext = offset + 1
        }
        if givenUpOn == side { givenUpOn = nil }
    }

    /// The next record to apply, or nil when there is none or the merge is waiting for the other side.
    ///
    /// - Parameters:
    ///   - positionsSide: what is known of the positions partition.
    ///   - commandsSide: what is known of the commands partition.
    ///   - now: the time the waits are measured by.
    ///   - maximumWait: how long an empty side that is caught up, as far as anyone knows, is waited for.
    ///   - laggingSideWait: how long an empty side known to hold more (or that has given nothing since the
    ///     assignment) is waited for.
    /// - Returns: the record, its side and its timestamp; nil when there is none to give now.
    mutating func next(
        positionsSide: Side,
        commandsSide: Side,
        now: ContinuousClock.Instant,
        maximumWait: Duration,
        laggingSideWait: Duration
    ) -> (record: Record, side: InputKind, timestamp: Int64)? {
        // By timestamps alone: looking at a record copies it, a retain and a release of what it holds.
        switch (positions.firstTimestamp, commands.firstTimestamp) {
        case (nil, nil):
            return nil
        case (let position?, let command?):
            return command <= position
                ? (commands.removeFirst(), .commands, command) : (positions.removeFirst(), .positions, position)
        case (let position?, nil):
            let lagging = Self.isLagging(commandsSide, next: commandsNext)
            guard commandsSide.atEnd || waited(for: .commands, lagging: lagging, now, maximumWait, laggingSideWait)
            else { return nil }
            return (positions.removeFirst(), .positions, position)
        case (nil, let command?):
            let lagging = Self.isLagging(positionsSide, next: positionsNext)
            guard positionsSide.atEnd || waited(for: .positions, lagging: lagging, now, maximumWait, laggingSideWait)
            else { return nil }
            return (commands.removeFirst(), .commands, command)
        }
    }

    /// Whether an empty side is known to hold more than it gave: nothing given since the assignment, or a high
    /// watermark beyond the next offset.
    private static func isLagging(_ side: Side, next: Int64?) -> Bool {
        guard let next else { return true }
        return side.highWatermark.map { $0 > next } ?? false
    }

    /// Drops everything buffered and forgets what was fetched (the pair's partitions were revoked; their next
    /// owner, this worker again after an eager rebalance included, reads them again).
    mutating func removeAll() {
        let givenUp = laggingWaitsGivenUp
        self = PartitionPairMerge()
        laggingWaitsGivenUp = givenUp
    }

    /// Whether the wait for the empty `side` is over.
    ///
    /// `laggingSideWait` for a lagging side, else `maximumWait`, from the first time it was found empty with the
    /// other side waiting. A lagging side given up on is not waited for again until it gives a record: an
    /// unavailable partition holds its partner once, not per poll.
    private mutating func waited(
        for side: InputKind,
        lagging: Bool,
        _ now: ContinuousClock.Instant,
        _ maximumWait: Duration,
        _ laggingSideWait: Duration
    ) -> Bool {
        if lagging && givenUpOn == side { return true }
        let bound = lagging ? laggingSideWait : maximumWait
        let since = waitingSince ?? now
        waitingSince = since
        guard now - since >= bound else { return false }
        if lagging {
            givenUpOn = side
            laggingWaitsGivenUp += 1
        }
        return true
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
