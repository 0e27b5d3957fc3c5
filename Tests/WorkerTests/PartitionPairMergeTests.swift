import GeoCore
import Testing

@testable import Worker

@Suite("Merging a co-partitioned pair by timestamp")
struct PartitionPairMergeTests {
    let start = ContinuousClock.now

    func drain(
        _ merge: inout PartitionPairMerge<String>,
        positionsAtEnd: Bool = false,
        commandsAtEnd: Bool = false,
        after elapsed: Duration = .zero,
        timestamps: UnsafeMutablePointer<[Int64]>? = nil
    ) -> [String] {
        var out: [String] = []
        while let (record, _, timestamp) = merge.next(
            positionsAtEnd: positionsAtEnd,
            commandsAtEnd: commandsAtEnd,
            now: start + elapsed,
            maximumWait: .milliseconds(200),
            unfetchedSideWait: .seconds(30)
        ) {
            out.append(record)
            timestamps?.pointee.append(timestamp)
        }
        return out
    }

    @Test("the earliest record of either side goes first; a command goes before a position of the same time")
    func timestampOrder() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", timestamp: 10, side: .positions)
        merge.append("p2", timestamp: 30, side: .positions)
        merge.append("p3", timestamp: 40, side: .positions)
        merge.append("c1", timestamp: 20, side: .commands)
        merge.append("c2", timestamp: 30, side: .commands)
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
        merge.append("c0", timestamp: 1, side: .commands)
        #expect(drain(&merge, positionsAtEnd: true) == ["c0"])  // the commands side has given records
        merge.append("p1", timestamp: 10, side: .positions)
        merge.append("p2", timestamp: 20, side: .positions)
        #expect(drain(&merge) == [])  // the wait starts
        #expect(drain(&merge, after: .milliseconds(199)) == [])
        #expect(drain(&merge, after: .milliseconds(200)) == ["p1", "p2"])
    }

    @Test("a command arriving during the wait is applied before the later positions")
    func lateCommand() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", timestamp: 10, side: .positions)
        merge.append("p2", timestamp: 30, side: .positions)
        #expect(drain(&merge) == [])
        merge.append("c1", timestamp: 20, side: .commands)
        // c1 must come before p2; then the commands side is empty again, and p2 waits afresh from 50 ms.
        #expect(drain(&merge, after: .milliseconds(50)) == ["p1", "c1"])
        #expect(drain(&merge, after: .milliseconds(249)) == [])
        #expect(drain(&merge, after: .milliseconds(250)) == ["p2"])
    }

    @Test("an empty side known to be at its end does not hold anything back")
    func sideAtEnd() {
        var merge = PartitionPairMerge<String>()
        merge.append("c1", timestamp: 5, side: .commands)
        #expect(drain(&merge, positionsAtEnd: true) == ["c1"])
    }

    @Test("a side that has given nothing since the assignment is waited for longer; a revocation starts over")
    func unfetchedSide() {
        var merge = PartitionPairMerge<String>()
        merge.append("p1", timestamp: 10, side: .positions)
        #expect(drain(&merge) == [])  // the wait starts
        #expect(drain(&merge, after: .milliseconds(200)) == [], "not the short wait: commands never came")
        #expect(drain(&merge, after: .seconds(29)) == [])
        merge.append("c1", timestamp: 5, side: .commands)  // the slow first fetch arrives, with an older command
        #expect(drain(&merge, after: .seconds(29)) == ["c1"])
        // Now the commands side has given records: the short wait applies to it.
        #expect(drain(&merge, after: .seconds(29) + .milliseconds(200)) == ["p1"])

        merge.removeAll()
        merge.append("p2", timestamp: 20, side: .positions)
        #expect(drain(&merge, after: .seconds(40)) == [])
        #expect(drain(&merge, after: .seconds(40) + .milliseconds(200)) == [], "reassigned: unfetched again")
        #expect(drain(&merge, after: .seconds(70)) == ["p2"], "but not for ever")
    }
}
