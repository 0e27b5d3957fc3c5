import Foundation

/// What the fleet's catalog lets the merge release now: a record stamped `t`, polled in the loop's poll `p`, goes once
/// the catalog is known to be read through `t`, so that it is decided against every catalog change stamped before it
/// whichever moment this instance read the catalog (the same input gives the same events).
///
/// Known in one of two ways, the first needing no question: every catalog partition has given a record stamped `t` or
/// later (``readThrough``), or every catalog partition's end was confirmed by the brokers after poll `p`
/// (``coversPoll``: nothing produced before the record was polled is left unread).
struct CatalogGate: Hashable, Sendable {
    /// The oldest of the catalog partitions' newest record times.
    var readThrough: Int64
    /// The last poll every catalog partition's end is known to cover.
    var coversPoll: Int

    /// No catalog, or its wait given up: everything goes.
    static let open = CatalogGate(readThrough: .max, coversPoll: .max)

    func allows(timestamp: Int64, polledIn poll: Int) -> Bool {
        timestamp <= readThrough || poll <= coversPoll
    }
}

/// How far each partition of the fleet's catalog is known to be read, for the merge's ``CatalogGate``; and the bound on
/// how long the merge waits for it.
///
/// The rule's assumption: within a catalog partition, record times do not go back (one producer's clock, or the topic's
/// `message.timestamp.type=LogAppendTime`). A record stamped before records already read from its partition, or before
/// positions already applied, is in force from its time for whatever is applied after it (history is not rewritten),
/// and counted as late (``CatalogFeed``).
///
/// An idle catalog costs a question to the brokers (``EndQuestions``) for each poll whose records wait: their answer
/// covers every record polled before it was asked, so records wait for about one round trip. A catalog that cannot be
/// read (its partition's leader gone) holds the merge for at most `bound`, counted and logged; the gate then stays
/// open until the catalog is read again, as a lagging input side is given up on once.
///
/// Pure: the caller passes in the time, what was read and what the brokers said.
struct CatalogFrontier {
    let partitionCount: Int
    let bound: Duration
    /// The newest record time read of each partition.
    private var newest: [Int32: Int64] = [:]
    /// Per partition, an end the brokers confirmed and the last poll it covers.
    private var covered: [Int32: (end: Int64, throughPoll: Int)] = [:]
    /// Since when the gate has held records back without a pause.
    private var heldSince: ContinuousClock.Instant?
    /// The wait reached its bound: the gate is open until the catalog makes progress.
    private var givenUp = false
    /// How many times the wait reached its bound.
    private(set) var waitsGivenUp = 0

    init(partitionCount: Int, bound: Duration) {
        self.partitionCount = partitionCount
        self.bound = bound
    }

    /// A record stamped `timestamp` was read from `partition`.
    mutating func noteRead(partition: Int32, timestamp: Int64) {
        newest[partition] = max(timestamp, newest[partition] ?? .min)
        givenUp = false
    }

    /// The brokers' ends of the catalog's partitions, asked after poll `asked`; each that agrees with the end the
    /// consumer has read to (`readTo`, its end-of-partition offsets) covers the polls through `asked`.
    mutating func confirm(_ brokerEnds: [Int32: Int64], askedAfterPoll asked: Int, readTo: [Int32: Int64]) {
        for (partition, brokerEnd) in brokerEnds {
            guard let end = readTo[partition], brokerEnd <= end else { continue }
            if let current = covered[partition], current.end == end, current.throughPoll >= asked { continue }
            covered[partition] = (end, asked)
            givenUp = false
        }
    }

    /// The gate now, with the consumer's end-of-partition offsets (`readTo`): an end confirmed before more was read is
    /// an end no more.
    func gate(readTo: [Int32: Int64]) -> CatalogGate {
        guard !givenUp else { return .open }
        var gate = CatalogGate.open
        for partition in 0..<Int32(partitionCount) {
            gate.readThrough = min(gate.readThrough, newest[partition] ?? .min)
            let confirmed = covered[partition].flatMap { $0.end == readTo[partition] ? $0.throughPoll : nil }
            gate.coversPoll = min(gate.coversPoll, confirmed ?? -1)
        }
        return gate
    }

    /// Whether the gate held records back in this round; true when its wait has just reached the bound (the caller
    /// logs it).
    mutating func noteHeld(_ held: Bool, now: ContinuousClock.Instant) -> Bool {
        guard held else {
            heldSince = nil
            return false
        }
        let since = heldSince ?? now
        heldSince = since
        guard !givenUp, now - since >= bound else { return false }
        givenUp = true
        heldSince = nil
        waitsGivenUp += 1
        return true
    }
}
