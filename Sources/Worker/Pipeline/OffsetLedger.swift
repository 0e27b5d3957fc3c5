import GeoCore
import Kafka
import PartitionOffsets

/// Every input partition's offsets on their way from the consumer to the group, in one place.
///
/// Each stage is the offset of the next message to read after what reached it:
/// - **started**: where the assignment started the partition (``noteStarted(_:)``): where a rewind takes a partition
///   that has nothing stored yet, whatever was read of it since;
/// - **read**: the first offset read since the partition was assigned (``noteRead(partition:kind:offset:)``): where a
///   rewind takes a partition with neither (its start left to the consumer's reset policy);
/// - **released**: the merge released the messages before it, in a round the apply threads have not all
///   finished (``noteReleased(_:inRound:)``);
/// - **applied**: every shard applied that round and every round before it (``noteApplied(throughRound:)``):
///   what the next complete checkpoint covers (``takeApplied()``); the latest per partition is the worker's progress
///   (``latestApplied``, its lag);
/// - **logged**: a written complete checkpoint's events and changelog records are delivered (``noteLogged(_:)``): what
///   a restart resumes from, restoring from the changelog what the store lacks, and what the group may be sent;
/// - **stored**: the store holds it (a stored checkpoint, its backlog, or an assignment that moved the store up to
///   it: ``noteStored(_:)``): what a rewind goes back to;
/// - **committed**: the consumer group acknowledged it; the ledger says which logged offsets the group
///   lacks (``uncommitted(of:acknowledged:)``).
///
/// Without a changelog, or when the store is written at every checkpoint, logged and stored are the same.
///
/// Offsets only move forward through the stages, and a later stage never passes an earlier one: a checkpoint
/// logs only applied offsets, the store holds only logged ones, and the group is sent only logged ones. A rewind forgets what was released
/// and applied but not stored (``discardUnstored()``); a revocation forgets where the partition started and what was
/// read of it (``forgetAssignment(partition:)``).
///
/// Owned by the loop's thread: the loop, the checkpoint, the rebalance hooks (inside the poll) and the
/// recovery from a refused delivery all run there, and all ask this type.
final class OffsetLedger {
    let topics: WorkerConfiguration.Topics
    /// The first offset read per side since assignment, at each pair's partition number: noted for every
    /// message, so an array rather than a dictionary hashed by topic name, and without the dynamic exclusivity
    /// check a class's stored property gets at every access (only the loop's thread touches the ledger).
    @exclusivity(unchecked) private var firstRead: [(positions: Int64?, commands: Int64?)] = []
    /// The last offset read per side since assignment or rewind, for the read-order check (``Invariant/readOrder``).
    @exclusivity(unchecked) private var lastRead: [(positions: Int64?, commands: Int64?)] = []
    /// Where the current assignment started each partition it gave a start to.
    private var started: [TopicPartition: Int64] = [:]
    /// Records read again or out of order since ``takeReadOrderBreaches()``.
    private var readOrderBreaches = BreachSample<String>()
    /// Released offsets per round, oldest first, until the round is applied.
    private var releasedRounds: [(round: Int, offsets: [TopicPartition: Int64])] = []
    /// Applied since the last ``takeApplied()``.
    private(set) var applied: [TopicPartition: Int64] = [:]
    /// The next offset after everything applied, per partition: the latest applied, else logged.
    private(set) var latestApplied: [TopicPartition: Int64]
    /// What the changelog (or the store) covers: events and changelog records delivered.
    private(set) var logged: [TopicPartition: Int64]
    /// What the store holds.
    private(set) var stored: [TopicPartition: Int64]

    /// - Parameters:
    ///   - topics: the input topics, which name the partitions.
    ///   - stored: the offsets the store holds at the start.
    init(topics: WorkerConfiguration.Topics, stored: [TopicPartition: Int64]) {
        self.topics = topics
        self.stored = stored
        logged = stored
        latestApplied = stored
    }

    // MARK: Read

    /// A message was read: the first one of its partition since assignment is remembered, and each one is checked
    /// to follow the last (``Invariant/readOrder``).
    func noteRead(partition: Int32, kind: InputKind, offset: Int64) {
        let pair = Int(partition)
        if pair >= firstRead.count {
            firstRead += Array(repeating: (nil, nil), count: pair + 1 - firstRead.count)
            lastRead += Array(repeating: (nil, nil), count: pair + 1 - lastRead.count)
        }
        let last: Int64?
        switch kind {
        case .positions:
            if firstRead[pair].positions == nil { firstRead[pair].positions = offset }
            last = lastRead[pair].positions
            lastRead[pair].positions = offset
        case .commands:
            if firstRead[pair].commands == nil { firstRead[pair].commands = offset }
            last = lastRead[pair].commands
            lastRead[pair].commands = offset
        }
        if let last, offset <= last {
            noteReadOrderBreach(partition: partition, kind: kind, offset: offset, after: last)
        }
    }

    private func noteReadOrderBreach(partition: Int32, kind: InputKind, offset: Int64, after last: Int64) {
        let topic = kind == .positions ? topics.positions : topics.commands
        readOrderBreaches.note { "\(TopicPartition(topic, partition))@\(offset) read after @\(last)" }
    }

    /// Records read again or out of order within one assignment since the last call; forgets them.
    func takeReadOrderBreaches() -> BreachSample<String> { readOrderBreaches.take() }

    /// The first offset read from each input partition since it was assigned.
    var read: [TopicPartition: Int64] {
        var result: [TopicPartition: Int64] = [:]
        for (pair, first) in firstRead.enumerated() {
            if let offset = first.positions { result[TopicPartition(topics.positions, Int32(pair))] = offset }
            if let offset = first.commands { result[TopicPartition(topics.commands, Int32(pair))] = offset }
        }
        return result
    }

    /// An assignment starts these partitions at these offsets (the next to read).
    func noteStarted(_ offsets: [TopicPartition: Int64]) {
        started.merge(offsets) { $1 }
    }

    /// The pair's partitions were revoked: where they start and what is read from them next is the next assignment's.
    func forgetAssignment(partition: Int32) {
        for topic in [topics.positions, topics.commands] {
            started[TopicPartition(topic, partition)] = nil
            latestApplied[TopicPartition(topic, partition)] = nil
        }
        guard Int(partition) < firstRead.count else { return }
        firstRead[Int(partition)] = (nil, nil)
        lastRead[Int(partition)] = (nil, nil)
    }

    // MARK: Released and applied

    /// The merge released messages up to these next offsets, handed to the apply threads as `round`.
    func noteReleased(_ offsets: [TopicPartition: Int64], inRound round: Int) {
        releasedRounds.append((round, offsets))
    }

    /// The apply threads finished every round up to and including `round`.
    func noteApplied(throughRound round: Int) {
        while let first = releasedRounds.first, first.round <= round {
            releasedRounds.removeFirst()
            // Later offsets of a partition supersede earlier ones.
            applied.merge(first.offsets) { _, later in later }
            latestApplied.merge(first.offsets) { _, later in later }
        }
    }

    /// The applied offsets not yet in a checkpoint, for the next one; forgets them.
    func takeApplied() -> [TopicPartition: Int64] {
        defer { applied = [:] }
        return applied
    }

    /// A rewind: what was released or applied and not stored will be read and applied again.
    func discardUnstored() {
        releasedRounds = []
        applied = [:]
        latestApplied = stored
        for pair in lastRead.indices { lastRead[pair] = (nil, nil) }
    }

    // MARK: Stored and committed

    /// A written checkpoint's events and changelog records are delivered up to these next offsets.
    func noteLogged(_ offsets: [TopicPartition: Int64]) {
        logged.merge(offsets) { max($0, $1) }
        latestApplied.merge(offsets) { max($0, $1) }
    }

    /// The store holds these next offsets now (a stored checkpoint's or backlog's, or an assignment's starts).
    func noteStored(_ offsets: [TopicPartition: Int64]) {
        stored.merge(offsets) { $1 }
        noteLogged(offsets)
    }

    /// The logged offset of each of `partitions` that the group has not acknowledged.
    func uncommitted(
        of partitions: some Sequence<TopicPartition>,
        acknowledged: [TopicPartition: Int64]
    ) -> [TopicPartition: Int64] {
        var offsets: [TopicPartition: Int64] = [:]
        for partition in partitions {
            if let offset = logged[partition], acknowledged[partition] != offset { offsets[partition] = offset }
        }
        return offsets
    }

    /// What the group's membership check of a checkpoint commits for each of the `assigned` partitions.
    ///
    /// Its logged offset (the changelog covers everything before it), else where its assignment started it, else the
    /// first offset read from it since: each says nothing the group does not know. A partition read from where the reset
    /// policy pointed has nothing logged until its first complete checkpoint, and the checkpoints before that are
    /// checked too.
    func confirmableOffsets(assigned: Set<TopicPartition>) -> [TopicPartition: Int64] {
        offsets(of: assigned, preferring: logged)
    }

    /// Where each of the `assigned` partitions reads again from after a rewind: its stored offset, which the devices
    /// put back from the store reflect; else (nothing stored for it yet: the store reflects none of its messages) where
    /// the assignment started it; else the first offset read from it since.
    ///
    /// Not "where the consumer is now": the batches the consumer gave since may never have reached the ledger (the
    /// loop drops a poll's batch when a refusal or a loss ends the poll), and the position moved past them.
    func rewindTargets(assigned: Set<TopicPartition>) -> [TopicPartition: Int64] {
        offsets(of: assigned, preferring: stored)
    }

    /// Each of `assigned`'s offset in `first`, else where its assignment started it, else the first offset read from it
    /// since; a partition with none of them is left out.
    private func offsets(
        of assigned: Set<TopicPartition>,
        preferring first: [TopicPartition: Int64]
    ) -> [TopicPartition: Int64] {
        let read = read
        var offsets: [TopicPartition: Int64] = [:]
        for partition in assigned {
            if let offset = first[partition] ?? started[partition] ?? read[partition] { offsets[partition] = offset }
        }
        return offsets
    }
}
