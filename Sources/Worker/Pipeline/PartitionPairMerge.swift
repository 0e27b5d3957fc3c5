import GeoCore

/// Orders the records of one co-partitioned pair (positions partition p, commands partition p) by their
/// Kafka timestamps, the way Kafka Streams synchronises co-partitioned inputs (with KIP-695's rule for a side
/// that is late).
///
/// Kafka orders messages only within a partition, so a `track` and a position for the same device have no
/// order between them until their timestamps give one. The merge hands out the earliest buffered record of
/// the pair (a command first on equal times, so a pin tracked at the moment of a fix applies to it). When one
/// side has nothing buffered, what happens depends on what is known of its partition (``Side``):
/// - read to its end: it has nothing earlier to give, and the other side goes on at once, provided the end is known to
///   cover the other side's record (``Side/endCoversPoll``): else the end is as good as "caught up" below, and the
///   caller is asked to confirm it (``unconfirmedEnd``);
/// - **lagging**: it holds more than was read (its high watermark, as librdkafka last saw it, is beyond the next
///   offset), or it has given nothing since the pair was assigned: it is waited for, up to `laggingSideWait`, so
///   that the events do not depend on which partition's fetch came first; a wait that reaches the bound is
///   counted (``laggingWaitsGivenUp``) and the other side goes on;
/// - caught up as far as anyone knows: it is waited for up to `maximumWait` (`mergeWait`), the time a record just
///   produced may take to arrive.
///
/// With the fleet's catalog, a record also waits until the catalog is known to be read through its timestamp
/// (``CatalogGate``), whichever side it is on.
///
/// Pure: the caller passes in the time and what it knows of each side's partition.
struct PartitionPairMerge<Record> {
    /// What the caller knows of one side's partition beyond what the pair holds.
    struct Side {
        /// The partition has been read to its end: the offset its end-of-partition event reported (the next to read
        /// then), nil while it is not at its end.
        var end: Int64? = nil
        var atEnd: Bool { end != nil }
        /// The partition's high watermark as librdkafka last saw it (nil: not known).
        var highWatermark: Int64? = nil
        /// The last poll whose records of the other side this end is known to cover (nil: none).
        ///
        /// The broker, asked after their poll, gave this end (``EndConfirmations``). What the consumer saw of the end
        /// (its end-of-partition event, its watermark) may be older than a record of the other side polled before it.
        var endCoversPoll: Int? = nil
    }

    private var positions = RecordQueue()
    private var commands = RecordQueue()
    /// Since when one side has been empty while the other had records waiting, and the poll of the waiting side's
    /// next record then: a record of a later poll (fetched while that one waited) waits afresh.
    private var waitingSince: (poll: Int, since: ContinuousClock.Instant)?
    /// The lagging side whose wait reached its bound: not waited for again until it gives a record.
    private var givenUpOn: InputKind?
    /// The offset after the last record each side gave since the pair was assigned; nil while it gave none.
    private var positionsNext: Int64?
    private var commandsNext: Int64?
    /// How many times a lagging side's wait reached its bound and the other side went on without it.
    private(set) var laggingWaitsGivenUp = 0
    /// What each side released while the other was read to its end, for the order check (``OrderBreach``).
    private var positionsAhead: SideAhead?
    private var commandsAhead: SideAhead?
    /// The side whose end held the other side's next record back, not known to cover it (``Side/endCoversPoll``).
    ///
    /// The caller confirms the end with the brokers. Set by every call of `next`.
    private(set) var unconfirmedEnd: InputKind?
    /// The breach the record just released made, if any.
    ///
    /// Set by every call of `next`: the record came after a record of the other side stamped later, though it was
    /// already in its partition when that one went ahead.
    private(set) var lastBreach: OrderBreach?
    /// Whether the last call of `next` held its record back for the catalog (``CatalogGate``).
    private(set) var heldByCatalog = false

    /// A record released after one of the other side stamped later, though the merge knew it was there: the merge's
    /// promise (timestamp order, unless a wait ran out) broken by what it was told of the partitions.
    struct OrderBreach: Hashable {
        let side: InputKind
        let offset: Int64
        let timestamp: Int64
        /// The latest timestamp the other side released ahead of it.
        let overtakenBy: Int64
        /// The end its partition was read to when the other side went ahead.
        let knownEnd: Int64
    }

    /// Records one side released while the other was read to its end.
    private struct SideAhead {
        /// The latest timestamp released that way.
        var timestamp: Int64
        /// The end the empty side's end-of-partition event reported (its watermark agreeing): a record below it was
        /// already in the partition.
        var otherEnd: Int64
    }

    var isEmpty: Bool { positions.isEmpty && commands.isEmpty }

    /// Buffers a record of `side`, polled in the caller's poll number `poll`.
    mutating func append(_ record: Record, offset: Int64, timestamp: Int64, side: InputKind, poll: Int = 0) {
        // A side that was empty has something again: no more waiting for it; the wait starts afresh the next
        // time a side runs dry.
        switch side {
        case .positions:
            if positions.isEmpty { waitingSince = nil }
            positions.append((record, offset, timestamp, poll))
            positionsNext = offset + 1
        case .commands:
            if commands.isEmpty { waitingSince = nil }
            commands.append((record, offset, timestamp, poll))
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
    ///   - catalog: whether the fleet's catalog has been read far enough for a record stamped so, polled then
    ///     (``CatalogGate``): a record it holds back is not given, and the pair waits.
    /// - Returns: the record, its side and its timestamp; nil when there is none to give now.
    mutating func next(
        positionsSide: Side,
        commandsSide: Side,
        now: ContinuousClock.Instant,
        maximumWait: Duration,
        laggingSideWait: Duration,
        catalog: CatalogGate = .open
    ) -> (record: Record, side: InputKind, timestamp: Int64)? {
        lastBreach = nil
        unconfirmedEnd = nil
        heldByCatalog = false
        // By timestamps alone: looking at a record copies it, a retain and a release of what it holds.
        switch (positions.firstTimestamp, commands.firstTimestamp) {
        case (nil, nil):
            return nil
        case (let position?, let command?):
            if command <= position {
                guard allowed(by: catalog, command, poll: commands.firstPoll!) else { return nil }
                check(.commands, offset: commands.firstOffset!, timestamp: command)
                return (commands.removeFirst(), .commands, command)
            }
            guard allowed(by: catalog, position, poll: positions.firstPoll!) else { return nil }
            check(.positions, offset: positions.firstOffset!, timestamp: position)
            return (positions.removeFirst(), .positions, position)
        case (let position?, nil):
            let lagging = Self.isLagging(commandsSide, next: commandsNext)
            let readToEnd = isReadToEnd(commandsSide, .commands, covering: positions.firstPoll!)
            guard
                readToEnd
                    || waited(
                        for: .commands,
                        lagging: lagging,
                        next: positions.firstPoll!,
                        now,
                        maximumWait,
                        laggingSideWait
                    )
            else { return nil }
            guard allowed(by: catalog, position, poll: positions.firstPoll!) else { return nil }
            check(.positions, offset: positions.firstOffset!, timestamp: position)
            if readToEnd { Self.note(&positionsAhead, position, otherEnd: commandsSide.end) }
            return (positions.removeFirst(), .positions, position)
        case (nil, let command?):
            let lagging = Self.isLagging(positionsSide, next: positionsNext)
            let readToEnd = isReadToEnd(positionsSide, .positions, covering: commands.firstPoll!)
            guard
                readToEnd
                    || waited(
                        for: .positions,
                        lagging: lagging,
                        next: commands.firstPoll!,
                        now,
                        maximumWait,
                        laggingSideWait
                    )
            else { return nil }
            guard allowed(by: catalog, command, poll: commands.firstPoll!) else { return nil }
            check(.commands, offset: commands.firstOffset!, timestamp: command)
            if readToEnd { Self.note(&commandsAhead, command, otherEnd: positionsSide.end) }
            return (commands.removeFirst(), .commands, command)
        }
    }

    /// Whether the catalog's gate lets the record go; notes it when not (``heldByCatalog``).
    private mutating func allowed(by catalog: CatalogGate, _ timestamp: Int64, poll: Int) -> Bool {
        guard catalog.allows(timestamp: timestamp, polledIn: poll) else {
            heldByCatalog = true
            return false
        }
        return true
    }

    /// Notes a record released because the other side was read to its end. (After a wait that ran out the order may
    /// differ from a run where the side came in time, as the wait rules allow: not noted.)
    private static func note(_ ahead: inout SideAhead?, _ timestamp: Int64, otherEnd: Int64?) {
        guard let otherEnd else { return }
        ahead = SideAhead(
            timestamp: max(timestamp, ahead?.timestamp ?? .min),
            otherEnd: max(otherEnd, ahead?.otherEnd ?? .min)
        )
    }

    /// Checks the record about to be released against what the other side released ahead of it: one stamped earlier
    /// than those, though it was already in its partition when they went ahead, breaks the order.
    private mutating func check(_ side: InputKind, offset: Int64, timestamp: Int64) {
        let other = side == .positions ? commandsAhead : positionsAhead
        guard let other, timestamp < other.timestamp, offset < other.otherEnd else { return }
        lastBreach = OrderBreach(
            side: side,
            offset: offset,
            timestamp: timestamp,
            overtakenBy: other.timestamp,
            knownEnd: other.otherEnd
        )
    }

    /// Whether an empty side has nothing more to give, as far as anyone knows: it was read to its end, and no fetch
    /// since has shown it holding more.
    ///
    /// The end-of-partition event is as old as the fetch that brought it. A later fetch that brings the side's next
    /// records also brings its high watermark, and the consumer knows the watermark before the poll returns the records
    /// (they may wait in its queue behind the other side's, fetched first): a side whose watermark has passed the end
    /// its event reported holds more, and is waited for like any lagging side. Believing the old event instead let
    /// the other side's later records overtake them: a command applied after positions stamped later. (The event's
    /// own offset, not the side's last record: transaction markers and compaction leave the end past the last record.)
    ///
    /// And the end must cover the other side's record: polled after it, the record may come from a later fetch whose part
    /// for this side is not parsed yet (``Side/endCoversPoll``). An end that does not is noted (``unconfirmedEnd``) and
    /// waited for like a side caught up as far as anyone knows.
    private mutating func isReadToEnd(_ side: Side, _ kind: InputKind, covering poll: Int) -> Bool {
        guard let end = side.end, side.highWatermark.map({ $0 <= end }) ?? true else { return false }
        guard let covered = side.endCoversPoll, covered >= poll else {
            unconfirmedEnd = kind
            return false
        }
        return true
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
    /// other side's next record (of poll `next`) waiting. The bound is each poll's: records fetched while an earlier
    /// poll's waited are as new as their fetch, and one whose end is not confirmed may come from a response whose part
    /// for the empty side is not parsed yet, so a wait that ran long for the earlier poll must not let them go at once.
    /// A lagging side given up on is not waited for again until it gives a record: an unavailable partition holds its
    /// partner once, not per poll.
    private mutating func waited(
        for side: InputKind,
        lagging: Bool,
        next poll: Int,
        _ now: ContinuousClock.Instant,
        _ maximumWait: Duration,
        _ laggingSideWait: Duration
    ) -> Bool {
        if lagging && givenUpOn == side { return true }
        let bound = lagging ? laggingSideWait : maximumWait
        if waitingSince?.poll != poll { waitingSince = (poll, now) }
        guard now - waitingSince!.since >= bound else { return false }
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
        private var storage: [(record: Record?, offset: Int64, timestamp: Int64, poll: Int)] = []
        private var head = 0

        var isEmpty: Bool { head == storage.count }
        var firstTimestamp: Int64? { isEmpty ? nil : storage[head].timestamp }

        var firstOffset: Int64? { isEmpty ? nil : storage[head].offset }
        var firstPoll: Int? { isEmpty ? nil : storage[head].poll }

        mutating func append(_ element: (record: Record, offset: Int64, timestamp: Int64, poll: Int)) {
            storage.append(element)
        }

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
