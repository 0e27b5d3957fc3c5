import GeoCore
import Testing

@testable import Worker

/// The catalog's side of the merge's time rule: a record goes once every catalog partition has given a record stamped
/// as late, or its end was confirmed after the record's poll; a wait reaches a bound.
@Suite("The catalog's gate on the merge", .timeLimit(.minutes(5)))
struct CatalogFrontierTests {
    let start = ContinuousClock.now

    @Test("read through a time: every partition's newest record at or past it; or every end confirmed after the poll")
    func gate() {
        var frontier = CatalogFrontier(partitionCount: 2, bound: .seconds(30))
        #expect(!frontier.gate(readTo: [:]).allows(timestamp: 0, polledIn: 1), "nothing known of either partition")
        frontier.noteRead(partition: 0, timestamp: 500)
        #expect(!frontier.gate(readTo: [:]).allows(timestamp: 100, polledIn: 1), "partition 1 may hold earlier ones")
        frontier.noteRead(partition: 1, timestamp: 300)
        #expect(frontier.gate(readTo: [:]).allows(timestamp: 300, polledIn: 1))
        #expect(!frontier.gate(readTo: [:]).allows(timestamp: 301, polledIn: 1))

        // Both partitions at their end (offsets 7 and 4), the brokers agreeing, asked after poll 5.
        frontier.confirm([0: 7, 1: 4], askedAfterPoll: 5, readTo: [0: 7, 1: 4])
        let gate = frontier.gate(readTo: [0: 7, 1: 4])
        #expect(gate.allows(timestamp: 10_000, polledIn: 5))
        #expect(!gate.allows(timestamp: 10_000, polledIn: 6), "polled after the question: not covered")
        // An end the brokers said is past what was read: more to read, not covered.
        var behind = CatalogFrontier(partitionCount: 1, bound: .seconds(30))
        behind.confirm([0: 9], askedAfterPoll: 5, readTo: [0: 7])
        #expect(!behind.gate(readTo: [0: 7]).allows(timestamp: 0, polledIn: 1))
        // Read past a confirmed end: that end covers nothing any more.
        #expect(!frontier.gate(readTo: [0: 8, 1: 4]).allows(timestamp: 10_000, polledIn: 1))
    }

    @Test("held past the bound: open, counted once, until the catalog is read again")
    func bound() {
        var frontier = CatalogFrontier(partitionCount: 1, bound: .seconds(30))
        let held1 = frontier.noteHeld(true, now: start)
        #expect(!held1)
        let held2 = frontier.noteHeld(true, now: start + .seconds(29))
        #expect(!held2)
        let held3 = frontier.noteHeld(true, now: start + .seconds(30))
        #expect(held3)
        #expect(frontier.waitsGivenUp == 1)
        #expect(frontier.gate(readTo: [:]) == .open)
        let held4 = frontier.noteHeld(true, now: start + .seconds(90))
        #expect(!held4, "given up once, not again while open")
        frontier.noteRead(partition: 0, timestamp: 10)
        #expect(!frontier.gate(readTo: [:]).allows(timestamp: 11, polledIn: 1), "read again: the rule is back")
        // A pause in the holding starts the wait afresh.
        let held5 = frontier.noteHeld(true, now: start + .seconds(100))
        #expect(!held5)
        let held6 = frontier.noteHeld(false, now: start + .seconds(110))
        #expect(!held6)
        let held7 = frontier.noteHeld(true, now: start + .seconds(125))
        #expect(!held7)
        #expect(frontier.waitsGivenUp == 1)
    }

    @Test("no catalog partition: the gate is open")
    func noPartitions() {
        #expect(CatalogFrontier(partitionCount: 0, bound: .seconds(1)).gate(readTo: [:]) == .open)
    }

    @Test("the pair merge holds a record the gate does not let go, and says so; others of earlier stamps go")
    func pairHolds() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", offset: 0, timestamp: 100, side: .positions, poll: 1)
        merge.append("p2", offset: 1, timestamp: 200, side: .positions, poll: 1)
        let side = PartitionPairMerge<String>.Side(end: .max, highWatermark: nil, endCoversPoll: .max)
        let gate = CatalogGate(readThrough: 150, coversPoll: 0)
        func next() -> String? {
            merge.next(
                positionsSide: side,
                commandsSide: side,
                now: start,
                maximumWait: .zero,
                laggingSideWait: .zero,
                catalog: gate
            )?.record
        }
        #expect(next() == "p1")
        #expect(next() == nil)
        #expect(merge.heldByCatalog)
    }
}
