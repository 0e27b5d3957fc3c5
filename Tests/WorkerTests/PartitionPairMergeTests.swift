import GeoCore
import Testing

@testable import Worker

@Suite("Merging a co-partitioned pair by timestamp", .timeLimit(.minutes(5)))
struct PartitionPairMergeTests {
    let start = ContinuousClock.now

    func drain(
        _ merge: inout PartitionPairMerge<String>,
        positionsAtEnd: Bool = false,
        commandsAtEnd: Bool = false,
        positionsHighWatermark: Int64? = nil,
        commandsHighWatermark: Int64? = nil,
        commandsEnd: Int64? = nil,
        commandsEndCoversPoll: Int = .max,
        after elapsed: Duration = .zero,
        timestamps: UnsafeMutablePointer<[Int64]>? = nil,
        breaches: UnsafeMutablePointer<[PartitionPairMerge<String>.OrderBreach?]>? = nil
    ) -> [String] {
        var out: [String] = []
        while let (record, _, timestamp) = merge.next(
            // At its end, unless told where that end was, past any watermark: no fetch has shown it holding more. An end
            // covers every poll's records unless told otherwise.
            positionsSide: .init(
                end: positionsAtEnd ? .max : nil,
                highWatermark: positionsHighWatermark,
                endCoversPoll: .max
            ),
            commandsSide: .init(
                end: commandsEnd ?? (commandsAtEnd ? .max : nil),
                highWatermark: commandsHighWatermark,
                endCoversPoll: commandsEndCoversPoll
            ),
            now: start + elapsed,
            maximumWait: .milliseconds(200),
            laggingSideWait: .seconds(30)
        ) {
            out.append(record)
            timestamps?.pointee.append(timestamp)
            breaches?.pointee.append(merge.lastBreach)
        }
        return out
    }

    @Test("the earliest record of either side goes first; a command goes before a position of the same time")
    func timestampOrder() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", offset: 101, timestamp: 10, side: .positions)
        merge.append("p2", offset: 102, timestamp: 30, side: .positions)
        merge.append("p3", offset: 103, timestamp: 40, side: .positions)
        merge.append("c1", offset: 104, timestamp: 20, side: .commands)
        merge.append("c2", offset: 105, timestamp: 30, side: .commands)
        // Both sides at their end: everything is released in timestamp order.
        var timestamps: [Int64] = []
        #expect(
            drain(&merge, positionsAtEnd: true, commandsAtEnd: true, timestamps: &timestamps)
                == ["p1", "c1", "c2", "p2", "p3"]
        )
        #expect(timestamps == [10, 20, 30, 30, 40], "each record comes out with its own timestamp")
        #expect(merge.isEmpty)
    }

    @Test("a side with nothing buffered holds the other back for the bounded wait, not longer")
    func boundedWait() {
        var merge = PartitionPairMerge<String>()
        merge.append("c0", offset: 106, timestamp: 1, side: .commands)
        #expect(drain(&merge, positionsAtEnd: true) == ["c0"])  // the commands side has given records
        merge.append("p1", offset: 107, timestamp: 10, side: .positions)
        merge.append("p2", offset: 108, timestamp: 20, side: .positions)
        #expect(drain(&merge) == [])  // the wait starts
        #expect(drain(&merge, after: .milliseconds(199)) == [])
        #expect(drain(&merge, after: .milliseconds(200)) == ["p1", "p2"])
    }

    @Test("a command arriving during the wait is applied before the later positions")
    func lateCommand() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", offset: 109, timestamp: 10, side: .positions)
        merge.append("p2", offset: 110, timestamp: 30, side: .positions)
        #expect(drain(&merge) == [])
        merge.append("c1", offset: 111, timestamp: 20, side: .commands)
        // c1 must come before p2; then the commands side is empty again, and p2 waits afresh from 50 ms.
        #expect(drain(&merge, after: .milliseconds(50)) == ["p1", "c1"])
        #expect(drain(&merge, after: .milliseconds(249)) == [])
        #expect(drain(&merge, after: .milliseconds(250)) == ["p2"])
    }

    @Test("an empty side known to be at its end does not hold anything back")
    func sideAtEnd() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 112, timestamp: 5, side: .commands)
        #expect(drain(&merge, positionsAtEnd: true) == ["c1"])
    }

    @Test("a side that has given nothing since the assignment is waited for longer; a revocation starts over")
    func unfetchedSide() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", offset: 113, timestamp: 10, side: .positions)
        #expect(drain(&merge) == [])  // the wait starts
        #expect(drain(&merge, after: .milliseconds(200)) == [], "not the short wait: commands never came")
        #expect(drain(&merge, after: .seconds(29)) == [])
        // The slow first fetch arrives, with an older command.
        merge.append("c1", offset: 114, timestamp: 5, side: .commands)
        #expect(drain(&merge, after: .seconds(29)) == ["c1"])
        // Now the commands side has given records: the short wait applies to it.
        #expect(drain(&merge, after: .seconds(29) + .milliseconds(200)) == ["p1"])

        merge.removeAll()
        merge.append("p2", offset: 115, timestamp: 20, side: .positions)
        #expect(drain(&merge, after: .seconds(40)) == [])
        #expect(drain(&merge, after: .seconds(40) + .milliseconds(200)) == [], "reassigned: unfetched again")
        #expect(drain(&merge, after: .seconds(70)) == ["p2"], "but not for ever")
    }

    @Test("KIP-695: an empty side whose high watermark is beyond what it gave is waited for, not only mergeWait")
    func laggingSide() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions)
        merge.append("p2", offset: 1, timestamp: 30, side: .positions)
        // c1 goes; then the commands side is empty, but its partition holds more (offsets 1 and 2 are on the
        // broker, fetched late behind a queue full of positions): the positions wait past mergeWait.
        #expect(drain(&merge, commandsHighWatermark: 3) == ["c1"])
        #expect(drain(&merge, commandsHighWatermark: 3, after: .seconds(5)) == [], "not mergeWait: it has more")
        merge.append("c2", offset: 1, timestamp: 20, side: .commands)  // the late fetch arrives
        #expect(drain(&merge, commandsHighWatermark: 3, after: .seconds(5)) == ["p1", "c2"], "in timestamp order")
        #expect(merge.laggingWaitsGivenUp == 0)
        // Caught up (the watermark is what it gave): mergeWait only, counted from when it ran dry (at 5 s).
        #expect(drain(&merge, commandsHighWatermark: 2, after: .seconds(5) + .milliseconds(199)) == [])
        #expect(drain(&merge, commandsHighWatermark: 2, after: .seconds(5) + .milliseconds(200)) == ["p2"])
    }

    @Test("a lagging side that never comes holds its partner for the bound, then is counted as given up, once")
    func laggingSideGivenUp() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands)
        #expect(drain(&merge, positionsAtEnd: true, commandsHighWatermark: 9) == ["c1"])
        merge.append("p1", offset: 0, timestamp: 10, side: .positions)
        merge.append("p2", offset: 1, timestamp: 20, side: .positions)
        #expect(drain(&merge, commandsHighWatermark: 9, after: .seconds(1)) == [])
        #expect(drain(&merge, commandsHighWatermark: 9, after: .seconds(31)) == ["p1", "p2"], "the bound is reached")
        #expect(merge.laggingWaitsGivenUp == 1)
        merge.append("p3", offset: 2, timestamp: 30, side: .positions)
        #expect(drain(&merge, commandsHighWatermark: 9, after: .seconds(32)) == ["p3"], "still given up")
        #expect(merge.laggingWaitsGivenUp == 1, "one wait, counted once")
    }

    /// Releases what the merge gives now (the positions side read to its end), each record with the order breach it
    /// made, if any.
    func releaseChecked(
        _ merge: inout PartitionPairMerge<String>,
        commandsHighWatermark: Int64? = nil,
        commandsEnd: Int64? = nil,
        after elapsed: Duration = .zero
    ) -> [(String, PartitionPairMerge<String>.OrderBreach?)] {
        var breaches: [PartitionPairMerge<String>.OrderBreach?] = []
        let records = drain(
            &merge,
            positionsAtEnd: true,
            commandsHighWatermark: commandsHighWatermark,
            commandsEnd: commandsEnd,
            after: elapsed,
            breaches: &breaches
        )
        return Array(zip(records, breaches))
    }

    @Test("a side read to its end whose high watermark has since moved past what it gave holds more: it is waited for")
    func endOverruledByWatermark() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions)
        #expect(drain(&merge, positionsAtEnd: true, commandsHighWatermark: 1, commandsEnd: 1) == ["c1", "p1"])
        // The end-of-partition event is as old as the fetch that brought it: a later fetch brought offset 1 (the
        // watermark moves to 2), which still waits in the consumer's queue behind positions stamped later.
        merge.append("p2", offset: 1, timestamp: 30, side: .positions)
        #expect(drain(&merge, positionsAtEnd: true, commandsHighWatermark: 2, commandsEnd: 1) == [])
        // The poll that returns offset 1 also reports the end again, at 2.
        merge.append("c2", offset: 1, timestamp: 20, side: .commands)
        #expect(
            drain(&merge, positionsAtEnd: true, commandsHighWatermark: 2, commandsEnd: 2) == ["c2", "p2"],
            "the command first, as its timestamp says"
        )
    }

    @Test(
        "an end known before the other side's record was polled does not cover it: the record waits for the end to be confirmed"
    )
    func endNotCoveringLaterPoll() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands, poll: 1)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions, poll: 1)
        #expect(drain(&merge, positionsAtEnd: true, commandsHighWatermark: 1, commandsEnd: 1) == ["c1", "p1"])
        // The commands' end-of-partition event came in poll 2 (it covers poll 1). Poll 3 brings a position from a
        // later fetch whose commands part, with a command produced before the position, librdkafka has not parsed
        // yet: the watermark it shows is still the old end.
        merge.append("p2", offset: 1, timestamp: 30, side: .positions, poll: 3)
        #expect(
            drain(&merge, positionsAtEnd: true, commandsHighWatermark: 1, commandsEnd: 1, commandsEndCoversPoll: 2)
                == [],
            "not ahead of a command the end may not cover"
        )
        #expect(merge.unconfirmedEnd == .commands, "the caller is asked to confirm the commands' end")
        // The command arrives in poll 4 with the end-of-partition event at 2 (covering poll 3): it goes first, as its
        // timestamp says.
        merge.append("c2", offset: 1, timestamp: 20, side: .commands, poll: 4)
        #expect(
            drain(&merge, positionsAtEnd: true, commandsHighWatermark: 2, commandsEnd: 2, commandsEndCoversPoll: 3)
                == ["c2", "p2"]
        )
        // Confirmed by the broker after poll 5 (the end is where it was): a position of poll 5 goes on at once.
        merge.append("p3", offset: 2, timestamp: 40, side: .positions, poll: 5)
        #expect(
            drain(&merge, positionsAtEnd: true, commandsHighWatermark: 2, commandsEnd: 2, commandsEndCoversPoll: 5)
                == ["p3"]
        )
        #expect(merge.unconfirmedEnd == nil)
        // Never confirmed (the broker does not answer): the end counts as caught up, and the wait is mergeWait's.
        merge.append("p4", offset: 3, timestamp: 50, side: .positions, poll: 6)
        #expect(drain(&merge, positionsAtEnd: true, commandsEnd: 2, commandsEndCoversPoll: 5) == [])
        #expect(
            drain(&merge, positionsAtEnd: true, commandsEnd: 2, commandsEndCoversPoll: 5, after: .milliseconds(200))
                == ["p4"]
        )
    }

    @Test(
        "a record of a later poll waits for its own confirmation: a wait that ran long for an earlier poll lets nothing go at once"
    )
    func laterPollWaitsAfresh() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands, poll: 1)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions, poll: 1)
        #expect(drain(&merge, positionsAtEnd: true, commandsHighWatermark: 1, commandsEnd: 1) == ["c1", "p1"])
        // Poll 3 brings a position the commands' end (its event came in poll 2) does not cover: it waits.
        merge.append("p2", offset: 1, timestamp: 30, side: .positions, poll: 3)
        #expect(
            drain(&merge, positionsAtEnd: true, commandsHighWatermark: 1, commandsEnd: 1, commandsEndCoversPoll: 2)
                == []
        )
        // A stream catching up: poll 4 brings the next position before the brokers' answer, which comes 300 ms later
        // and covers poll 3 only. The position of poll 4 may come from a fetch whose commands part is not parsed yet.
        merge.append("p3", offset: 2, timestamp: 50, side: .positions, poll: 4)
        #expect(
            drain(
                &merge,
                positionsAtEnd: true,
                commandsHighWatermark: 1,
                commandsEnd: 1,
                commandsEndCoversPoll: 3,
                after: .milliseconds(300)
            ) == ["p2"],
            "p3 waits for an answer that covers its poll, whatever p2 waited"
        )
        // It did: poll 5 brings the command stamped before p3, which goes first.
        merge.append("c2", offset: 1, timestamp: 40, side: .commands, poll: 5)
        #expect(
            drain(
                &merge,
                positionsAtEnd: true,
                commandsHighWatermark: 2,
                commandsEnd: 2,
                commandsEndCoversPoll: 5,
                after: .milliseconds(310)
            ) == ["c2", "p3"]
        )
        // With no answer at all, a record of a later poll still goes after its own bound.
        merge.append("p4", offset: 3, timestamp: 60, side: .positions, poll: 6)
        merge.append("p5", offset: 4, timestamp: 70, side: .positions, poll: 6)
        #expect(drain(&merge, positionsAtEnd: true, commandsEnd: 2, commandsEndCoversPoll: 5, after: .seconds(1)) == [])
        merge.append("p6", offset: 5, timestamp: 80, side: .positions, poll: 7)
        #expect(
            drain(
                &merge,
                positionsAtEnd: true,
                commandsEnd: 2,
                commandsEndCoversPoll: 5,
                after: .seconds(1) + .milliseconds(200)
            ) == ["p4", "p5"],
            "the records of one poll wait together"
        )
        #expect(
            drain(
                &merge,
                positionsAtEnd: true,
                commandsEnd: 2,
                commandsEndCoversPoll: 5,
                after: .seconds(1) + .milliseconds(400)
            ) == ["p6"]
        )
    }

    @Test("a side whose end lies past its last record (a transaction marker) is at its end while the watermark agrees")
    func endPastLastRecord() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions)
        // Offset 1 is the commit marker of c1's transaction: the end is 2, and so is the watermark.
        #expect(drain(&merge, positionsAtEnd: true, commandsHighWatermark: 2, commandsEnd: 2) == ["c1", "p1"])
    }

    @Test(
        "the order check: a record below what its side had given when the other side went ahead is a breach; a late one is not"
    )
    func orderBreach() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 4, timestamp: 5, side: .commands)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions)
        let first = releaseChecked(&merge, commandsEnd: 5)
        #expect(first.map(\.0) == ["c1", "p1"] && first.allSatisfy { $0.1 == nil })
        // Offset 3 was in the partition before what the commands side gave (read again, or out of order): it comes
        // after a position stamped later.
        merge.append("c0", offset: 3, timestamp: 4, side: .commands)
        let second = releaseChecked(&merge, commandsEnd: 5)
        #expect(second.map(\.0) == ["c0"])
        #expect(
            second.first?.1
                == PartitionPairMerge<String>.OrderBreach(
                    side: .commands,
                    offset: 3,
                    timestamp: 4,
                    overtakenBy: 10,
                    knownEnd: 5
                )
        )
        // Produced after the positions went ahead: its lateness is the producer's, not the merge's.
        merge.append("c2", offset: 5, timestamp: 8, side: .commands)
        let third = releaseChecked(&merge, commandsEnd: 6)
        #expect(third.map(\.0) == ["c2"] && third.first?.1 == nil)
        // A revocation forgets what went ahead.
        merge.removeAll()
        merge.append("c3", offset: 1, timestamp: 1, side: .commands)
        #expect(releaseChecked(&merge, commandsEnd: 2).first?.1 == nil)
    }

    @Test("the order check: positions that went ahead because a wait ran out are the wait rule's, not a breach")
    func orderAfterWait() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", offset: 0, timestamp: 5, side: .commands)
        merge.append("p1", offset: 0, timestamp: 10, side: .positions)
        #expect(releaseChecked(&merge, commandsHighWatermark: 1).map(\.0) == ["c1"])
        #expect(releaseChecked(&merge, commandsHighWatermark: 1, after: .milliseconds(200)).map(\.0) == ["p1"])
        merge.append("c2", offset: 1, timestamp: 7, side: .commands)
        let late = releaseChecked(&merge, commandsHighWatermark: 2, after: .milliseconds(300))
        #expect(late.map(\.0) == ["c2"] && late.first?.1 == nil)
    }
}
