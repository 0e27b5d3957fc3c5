import GeoCore
import Kafka
import PartitionOffsets

/// What the merge stage needs of a consumed record.
protocol MergeableRecord {
    var partition: Int32 { get }
    var offset: Int64 { get }
    /// Milliseconds since the epoch; a record without one sorts first.
    var timestampMilliseconds: Int64? { get }
    /// The record's key as text (the device id), for what the merge logs; nil for none.
    var keyText: String? { get }
}

extension MergeableRecord {
    var keyText: String? { nil }
}

extension ConsumerRecord: MergeableRecord {
    var keyText: String? { key.map { String(decoding: $0, as: UTF8.self) } }
}

/// The worker loop's merge stage: one ``PartitionPairMerge`` per co-partitioned pair (positions partition p
/// with commands partition p), which releases records in timestamp order, and the next input offset of every
/// partition with records released since the offsets were last taken (handed to the ``OffsetLedger``).
///
/// Pure, like the pair merges: the caller passes in the time and the partitions known to be at their end.
struct InputMerge<Record: MergeableRecord> {
    let topics: WorkerConfiguration.Topics
    /// The input topics' names as the released messages' origins carry them.
    private let positionsName: TopicName
    private let commandsName: TopicName
    /// How long a pair waits for a side with nothing buffered (``WorkerConfiguration/mergeWait``).
    let mergeWait: Duration
    /// How long a pair waits for a side known to hold more than it gave (``PartitionPairMerge``).
    let laggingSideWait: Duration
    /// Each pair's merge, at its partition number.
    private var pairs: [PartitionPairMerge<Record>] = []
    /// The next offset after the records released since ``takeReleasedOffsets()``, per partition.
    private var released: [TopicPartition: Int64] = [:]
    /// Which polls' records each partition's end covers.
    private var ends = EndConfirmations()
    /// The partitions whose end held the other side back since ``takeUnconfirmedEnds()``, not known to cover its records
    /// (``PartitionPairMerge/Side/endCoversPoll``).
    private var unconfirmedEnds: Set<TopicPartition> = []
    /// Records released out of order since ``takeOrderBreaches()``.
    private var breaches = BreachSample<OrderBreach>()
    /// Whether the catalog's gate held a record back since ``takeCatalogHeld()``.
    private var catalogHeld = false
    /// The newest timestamp of a record released: a catalog change stamped before it comes late for some.
    ///
    /// Not the ``StreamClock``'s newest: the clock starts a pair again when the pair is revoked or rewound (its devices'
    /// silence counts from what this instance applies of it), while a catalog change came late for whatever positions
    /// this instance ever applied, kept or not.
    private(set) var newestReleased = Int64.min
    /// Each pair's stream time, by what it released: what devices' silence is decided by.
    private var streamClock = StreamClock()

    /// A record released after a record of the other side of its pair stamped later, though the merge had been told
    /// its partition held it when that one went ahead: what a merge that keeps its promise never does
    /// (``PartitionPairMerge/OrderBreach``).
    struct OrderBreach: Hashable, CustomStringConvertible {
        let partition: TopicPartition
        let breach: PartitionPairMerge<Record>.OrderBreach
        let device: String?

        var description: String {
            "\(partition)@\(breach.offset) (device \(device ?? "?"), stamped \(breach.timestamp)) after a record of its "
                + "pair stamped \(breach.overtakenBy), though the partition's end was known to be \(breach.knownEnd)"
        }
    }

    /// The order breaches since the last call; forgets them.
    mutating func takeOrderBreaches() -> BreachSample<OrderBreach> { breaches.take() }

    /// How long a pair waits, by default, for a side known to hold more than it gave (see
    /// ``PartitionPairMerge``): long enough for a fetch that comes late behind a consumer queue full of the
    /// other topic's messages, bounded so that an unavailable partition does not stop its partner for ever.
    static var defaultLaggingSideWait: Duration { .seconds(30) }

    init(
        topics: WorkerConfiguration.Topics,
        mergeWait: Duration,
        laggingSideWait: Duration = Self.defaultLaggingSideWait
    ) {
        self.topics = topics
        positionsName = TopicName(topics.positions)
        commandsName = TopicName(topics.commands)
        self.mergeWait = mergeWait
        self.laggingSideWait = laggingSideWait
    }

    /// How many times a pair's wait for a lagging side reached its bound and the other side went on without it:
    /// the events may then differ from a run where the side came in time.
    var laggingWaitsGivenUp: Int { pairs.reduce(0) { $0 + $1.laggingWaitsGivenUp } }

    /// What the worker logs when a lagging side's wait reached its bound.
    var laggingWaitWarning: String {
        "a partition known to hold more records was not fetched within \(laggingSideWait): its pair went on without "
            + "it, so these events may differ from a run where it came in time"
    }

    /// Nothing buffered waits to be released.
    var isEmpty: Bool { pairs.allSatisfy(\.isEmpty) }

    /// The number of the loop's current poll (``polled()``).
    var poll: Int { ends.poll }

    /// A new poll begins: the records appended from now on are its.
    mutating func polled() {
        ends.polled()
    }

    /// Takes the brokers' answer about partitions' ends (``EndQuestions``), asked after poll `asked`.
    mutating func confirmEnds(
        _ brokerEnds: [TopicPartition: Int64],
        askedAfterPoll asked: Int,
        readTo atEnd: [TopicPartition: Int64]
    ) {
        ends.confirm(brokerEnds, askedAfterPoll: asked, readTo: atEnd)
    }

    /// Buffers a record of the current poll in its pair's merge.
    mutating func append(_ record: consuming Record, kind: InputKind) {
        let pair = Int(record.partition)
        if pair >= pairs.count { pairs += Array(repeating: PartitionPairMerge(), count: pair + 1 - pairs.count) }
        let timestamp = record.timestampMilliseconds ?? 0
        let offset = record.offset
        pairs[pair].append(consume record, offset: offset, timestamp: timestamp, side: kind, poll: ends.poll)
    }

    /// Hands `body` what each pair's merge releases now, in merge order, with where it came from, its pair's stream
    /// time before it (``StreamClock``; `Int64.min` while the pair has released nothing), and `sink` to put it in;
    /// notes the next offsets.
    ///
    /// `atEnd` names the partitions read to their end, each with the offset its end-of-partition event reported;
    /// `highWatermark` answers a partition's high watermark as the consumer last saw it (nil when unknown). Which
    /// polls' records an end covers, the merge knows (``EndConfirmations``).
    ///
    /// With the fleet's catalog, `catalog` holds back what is stamped past what the catalog is known to be read through.
    ///
    /// The sink is passed in rather than captured: the loop's shards, captured by the closure, were a property
    /// of the worker reached through its exclusivity check, and the shard a retain and a release, at every
    /// record.
    mutating func release<Sink>(
        atEnd: [TopicPartition: Int64],
        highWatermark: (TopicPartition) -> Int64?,
        now: ContinuousClock.Instant,
        catalog: CatalogGate = .open,
        into sink: inout Sink,
        _ body: (
            _ sink: inout Sink, _ record: consuming Record, _ kind: InputKind, _ origin: MessageOrigin,
            _ streamTime: Int64
        ) -> Void
    ) {
        for pair in pairs.indices where !pairs[pair].isEmpty {
            let number = Int32(pair)
            // The next offsets after what is released, noted once per pair rather than per record.
            var nextOffsets: (positions: Int64?, commands: Int64?)
            // The pair's stream time as the records go: each is handed the time before it.
            var newestOfPair = streamClock.time(of: number) ?? Int64.min
            // Looked up once per pair: each lookup hashes a topic name. Both watermarks, as either side may run
            // dry while the pair releases.
            let (positionsPartition, commandsPartition) = (
                TopicPartition(topics.positions, number), TopicPartition(topics.commands, number)
            )
            let positionsSide: PartitionPairMerge<Record>.Side = ends.side(
                of: positionsPartition,
                readTo: atEnd[positionsPartition],
                highWatermark: highWatermark(positionsPartition)
            )
            let commandsSide: PartitionPairMerge<Record>.Side = ends.side(
                of: commandsPartition,
                readTo: atEnd[commandsPartition],
                highWatermark: highWatermark(commandsPartition)
            )
            while let (record, kind, timestamp) = pairs[pair].next(
                positionsSide: positionsSide,
                commandsSide: commandsSide,
                now: now,
                maximumWait: mergeWait,
                laggingSideWait: laggingSideWait,
                catalog: catalog
            ) {
                let streamTime = newestOfPair
                newestOfPair = max(newestOfPair, timestamp)
                let origin = MessageOrigin(
                    topic: kind == .positions ? positionsName : commandsName,
                    partition: number,
                    offset: record.offset,
                    timestamp: timestamp
                )
                switch kind {
                case .positions: nextOffsets.positions = origin.offset + 1
                case .commands: nextOffsets.commands = origin.offset + 1
                }
                if let breach = pairs[pair].lastBreach { noteBreach(breach, record: record, kind: kind, pair: number) }
                if pairs[pair].unconfirmedEnd != nil { noteUnconfirmedEnd(of: pair) }
                // Handed over, not copied: a copy is a retain and a release of what the record holds (its batch).
                body(&sink, consume record, kind, origin, streamTime)
            }
            noteUnconfirmedEnd(of: pair)
            if newestOfPair != Int64.min {
                newestReleased = max(newestReleased, newestOfPair)
                streamClock.released(upTo: newestOfPair, partition: number, at: now)
            }
            if pairs[pair].heldByCatalog { catalogHeld = true }
            if let next = nextOffsets.positions { released[TopicPartition(topics.positions, number)] = next }
            if let next = nextOffsets.commands { released[TopicPartition(topics.commands, number)] = next }
        }
    }

    private mutating func noteBreach(
        _ breach: PartitionPairMerge<Record>.OrderBreach,
        record: borrowing Record,
        kind: InputKind,
        pair: Int32
    ) {
        let topic = kind == .positions ? topics.positions : topics.commands
        let device = record.keyText
        breaches.note { OrderBreach(partition: TopicPartition(topic, pair), breach: breach, device: device) }
    }

    /// Notes the partition whose end the pair's last call of `next` found not covering the other side's record.
    private mutating func noteUnconfirmedEnd(of pair: Int) {
        guard let side = pairs[pair].unconfirmedEnd else { return }
        unconfirmedEnds.insert(TopicPartition(side == .positions ? topics.positions : topics.commands, Int32(pair)))
    }

    /// The partitions whose end held the other side back, not known to cover its records, since the last call.
    ///
    /// The loop asks the brokers for their ends (``EndQuestions``). Forgets them.
    mutating func takeUnconfirmedEnds() -> Set<TopicPartition> {
        defer { unconfirmedEnds = [] }
        return unconfirmedEnds
    }

    /// Whether the catalog's gate held a record back since the last call; forgets it.
    mutating func takeCatalogHeld() -> Bool {
        defer { catalogHeld = false }
        return catalogHeld
    }

    /// The next offset of every partition with records released since the last call (the ``OffsetLedger``'s
    /// released stage), and forgets them.
    mutating func takeReleasedOffsets() -> [TopicPartition: Int64] {
        defer { released = [:] }
        return released
    }

    /// The pairs whose stream time moved since the last call (``StreamClock``), with their time now; forgets them.
    mutating func takeStreamAdvances() -> [StreamClock.Advance] { streamClock.takeAdvances() }

    /// The wall clock for each idle pair of `partitions`, once a second.
    ///
    /// Idle: nothing buffered, both sides read to their end (`atEnd`, asked only when it looks), nothing released for
    /// `idleAfter` (``StreamClock/idleAdvances(partitions:isIdle:now:wallTime:idleAfter:)``).
    mutating func idleStreamAdvances(
        partitions: some Sequence<Int32>,
        atEnd: () -> Set<TopicPartition>,
        now: ContinuousClock.Instant,
        wallTime: () -> Int64,
        idleAfter: Duration
    ) -> [StreamClock.Advance] {
        guard streamClock.isIdleCheckDue(at: now) else { return [] }
        let atEnd = atEnd()
        let pairs = pairs
        let topics = topics
        return streamClock.idleAdvances(
            partitions: partitions,
            isIdle: { partition in
                (Int(partition) >= pairs.count || pairs[Int(partition)].isEmpty)
                    && atEnd.contains(TopicPartition(topics.positions, partition))
                    && atEnd.contains(TopicPartition(topics.commands, partition))
            },
            now: now,
            wallTime: wallTime(),
            idleAfter: idleAfter
        )
    }

    /// Drops what is buffered for a revoked pair (its next owner reads it again from the checkpoint), and its stream
    /// time.
    mutating func removeAll(partition: Int32) {
        streamClock.restart(partition: partition)
        guard Int(partition) < pairs.count else { return }
        pairs[Int(partition)].removeAll()
    }

    /// Drops everything buffered and released since the offsets were last taken (a rewind: the consumer is
    /// taken back to the stored offsets and reads it all again).
    mutating func rewind() {
        for pair in pairs.indices { pairs[pair].removeAll() }
        streamClock.restartAll()
        released = [:]
    }
}
