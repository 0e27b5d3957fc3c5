import GeoCore
import Kafka
import PartitionOffsets
import Testing

@testable import Worker

/// The offset ledger: each stage in its place, and where a rewind takes each partition.
@Suite("Input offsets from read to committed", .timeLimit(.minutes(5)))
struct OffsetLedgerTests {
    let topics = WorkerConfiguration.Topics(positions: "positions", commands: "commands", events: "events")

    @Test("each assigned partition reads again from its stored offset, else from the first offset it gave")
    func rewindTargets() {
        let stored = TopicPartition("positions", 0)
        let unstored = TopicPartition("commands", 0)
        let untouched = TopicPartition("positions", 1)
        let revoked = TopicPartition("positions", 2)
        let ledger = OffsetLedger(topics: topics, stored: [stored: 120, revoked: 7])
        for (partition, offset) in [(stored, Int64(100)), (unstored, 40), (revoked, 3), (stored, 130), (unstored, 41)] {
            ledger.noteRead(
                partition: partition.partition,
                kind: partition.topic == "commands" ? .commands : .positions,
                offset: offset
            )
        }
        #expect(ledger.read == [stored: 100, unstored: 40, revoked: 3], "the first read per partition")
        let targets = ledger.rewindTargets(assigned: [stored, unstored, untouched])
        #expect(targets == [stored: 120, unstored: 40], "a partition that gave nothing keeps its position")
        ledger.forgetAssignment(partition: 0)
        #expect(ledger.rewindTargets(assigned: [stored, unstored]) == [stored: 120], "a revocation forgets reads")
    }

    @Test("a partition with nothing stored reads again from where its assignment started it, whatever was read since")
    func rewindToTheAssignmentsStart() {
        // Seen on noida-db: an assignment and a refusal in one poll; the poll's batch, the partitions' first 1,470
        // records, was dropped unnoted, and the rewind left them where the consumer was: past those records.
        let started = TopicPartition("positions", 0)
        let startedAndRead = TopicPartition("positions", 1)
        let ledger = OffsetLedger(topics: topics, stored: [:])
        ledger.noteStarted([started: 0, startedAndRead: 0])
        ledger.noteRead(partition: 1, kind: .positions, offset: 1530)
        #expect(ledger.rewindTargets(assigned: [started, startedAndRead]) == [started: 0, startedAndRead: 0])
        ledger.noteStored([startedAndRead: 1600])
        #expect(ledger.rewindTargets(assigned: [startedAndRead]) == [startedAndRead: 1600], "the store's offset first")
        ledger.forgetAssignment(partition: 0)
        #expect(ledger.rewindTargets(assigned: [started]).isEmpty, "a revocation forgets where the partition started")
    }

    @Test("the membership check commits what is logged, else where the assignment started, else the first read")
    func confirmableOffsets() {
        let logged = TopicPartition("positions", 0)
        let started = TopicPartition("positions", 1)
        let readOnly = TopicPartition("commands", 1)
        let untouched = TopicPartition("commands", 0)
        let ledger = OffsetLedger(topics: topics, stored: [logged: 500])
        ledger.noteStarted([logged: 480, started: 0])
        ledger.noteRead(partition: 0, kind: .positions, offset: 480)
        ledger.noteRead(partition: 1, kind: .commands, offset: 70)
        ledger.noteRead(partition: 1, kind: .commands, offset: 71)
        let assigned: Set = [logged, started, readOnly, untouched]
        #expect(ledger.confirmableOffsets(assigned: assigned) == [logged: 500, started: 0, readOnly: 70])
        ledger.forgetAssignment(partition: 1)
        #expect(
            ledger.confirmableOffsets(assigned: [started, readOnly]).isEmpty,
            "a partition revoked and not read since has nothing to confirm"
        )
        #expect(ledger.confirmableOffsets(assigned: [logged, started]) == [logged: 500])
    }

    @Test("released offsets count as applied only through their round, in order; a checkpoint takes them once")
    func releasedThenApplied() {
        let first = TopicPartition("positions", 0)
        let ledger = OffsetLedger(topics: topics, stored: [:])
        ledger.noteReleased([first: 10], inRound: 0)
        ledger.noteReleased([first: 20], inRound: 1)
        #expect(ledger.takeApplied().isEmpty, "released is not applied")
        ledger.noteApplied(throughRound: 0)
        #expect(ledger.takeApplied() == [first: 10])
        #expect(ledger.takeApplied().isEmpty, "taken once")
        ledger.noteApplied(throughRound: 1)
        ledger.discardUnstored()
        #expect(ledger.takeApplied().isEmpty, "a rewind forgets what was applied and not stored")
    }

    @Test("the group is sent the stored offsets it has not acknowledged, never an offset not stored")
    func uncommitted() {
        let (a, b, c) = (TopicPartition("positions", 0), TopicPartition("positions", 1), TopicPartition("commands", 0))
        let ledger = OffsetLedger(topics: topics, stored: [a: 5])
        ledger.noteReleased([b: 9], inRound: 0)
        ledger.noteApplied(throughRound: 0)
        ledger.noteStored([c: 3])
        #expect(ledger.uncommitted(of: [a, b, c], acknowledged: [a: 5]) == [c: 3])
        ledger.noteStored([a: 8])
        #expect(ledger.stored == [a: 8, c: 3])
        #expect(ledger.uncommitted(of: [a], acknowledged: [a: 5]) == [a: 8])
    }

    @Test("logged offsets (the changelog covers them) go to the group; a rewind goes back only to the stored ones")
    func loggedAheadOfStored() {
        let a = TopicPartition("positions", 0)
        let ledger = OffsetLedger(topics: topics, stored: [a: 5])
        ledger.noteLogged([a: 9])
        #expect(ledger.stored == [a: 5], "logged is not stored: the store lags its changelog")
        #expect(
            ledger.uncommitted(of: [a], acknowledged: [a: 5]) == [a: 9],
            "the group may have what the changelog covers"
        )
        #expect(ledger.rewindTargets(assigned: [a]) == [a: 5], "a rewind goes back to what the store holds")
        ledger.noteStored([a: 9])
        #expect(ledger.rewindTargets(assigned: [a]) == [a: 9])
        ledger.noteStored([a: 12])
        #expect(ledger.logged == [a: 12], "what is stored is logged")
        ledger.noteLogged([a: 10])
        #expect(ledger.logged == [a: 12], "logged never goes back")
    }
}
