import GeoCore
import Kafka
import PartitionOffsets
import Testing

@testable import Worker

@Suite("The worker's merge stage: pairs released in order, next offsets noted", .timeLimit(.minutes(5)))
struct InputMergeTests {
    struct Record: MergeableRecord, Equatable {
        let partition: Int32
        let offset: Int64
        let timestampMilliseconds: Int64?
    }

    let topics = WorkerConfiguration.Topics(positions: "p", commands: "c", events: "e", deadLetters: "dl")
    let now = ContinuousClock.now

    func makeMerge() -> InputMerge<Record> {
        InputMerge(topics: topics, mergeWait: .milliseconds(200), laggingSideWait: .seconds(30))
    }

    /// Every partition of both topics, 0 to 2, read to its end.
    var allAtEnd: Set<TopicPartition> {
        Set((0..<3).flatMap { [TopicPartition("p", Int32($0)), TopicPartition("c", Int32($0))] })
    }

    func release(_ merge: inout InputMerge<Record>, atEnd partitions: Set<TopicPartition>) -> [String] {
        releaseWithStreamTimes(&merge, atEnd: partitions).map(\.record)
    }

    /// What `release` gives, each record with its pair's stream time before it.
    func releaseWithStreamTimes(
        _ merge: inout InputMerge<Record>,
        atEnd partitions: Set<TopicPartition>
    ) -> [(record: String, streamTime: Int64)] {
        // No watermark is known here: the end offsets the events reported do not matter.
        let atEnd = Dictionary(uniqueKeysWithValues: partitions.map { ($0, Int64(0)) })
        var released: [(record: String, streamTime: Int64)] = []
        func unknown(_: TopicPartition) -> Int64? { nil }
        // The brokers, asked now, gave every end: each covers the records appended before.
        merge.confirmEnds(atEnd, askedAfterPoll: merge.poll, readTo: atEnd)
        merge.release(atEnd: atEnd, highWatermark: unknown, now: now, into: &released) {
            released,
            record,
            kind,
            origin,
            streamTime in
            #expect(origin.topic == (kind == .commands ? "c" : "p"))
            #expect(origin.partition == record.partition && origin.offset == record.offset)
            #expect(origin.timestamp == record.timestampMilliseconds ?? 0)
            released.append(("\(origin.topic)\(record.partition)@\(record.offset)", streamTime))
        }
        return released
    }

    @Test("each pair's records come out by timestamp, and the offsets to store are the next after what came out")
    func releasesAndNotesOffsets() {
        var merge = makeMerge()
        merge.append(Record(partition: 0, offset: 10, timestampMilliseconds: 200), kind: .positions)
        merge.append(Record(partition: 0, offset: 11, timestampMilliseconds: 400), kind: .positions)
        merge.append(Record(partition: 0, offset: 5, timestampMilliseconds: 300), kind: .commands)
        merge.append(Record(partition: 2, offset: 7, timestampMilliseconds: 100), kind: .positions)

        #expect(release(&merge, atEnd: allAtEnd) == ["p0@10", "c0@5", "p0@11", "p2@7"])
        #expect(merge.isEmpty)
        #expect(
            merge.takeReleasedOffsets() == [
                TopicPartition("p", 0): 12, TopicPartition("c", 0): 6, TopicPartition("p", 2): 8,
            ]
        )
        #expect(merge.takeReleasedOffsets().isEmpty, "taken offsets are forgotten")
    }

    @Test("a pair whose other side has not been fetched holds its records; a revoked pair forgets them")
    func holdsAndForgets() {
        var merge = makeMerge()
        merge.append(Record(partition: 1, offset: 3, timestampMilliseconds: 100), kind: .positions)
        // The commands partition of pair 1 has given nothing yet and is not known to be at its end.
        let positionsOnly: Set<TopicPartition> = [TopicPartition("p", 1)]
        #expect(release(&merge, atEnd: positionsOnly).isEmpty)
        #expect(!merge.isEmpty)
        #expect(merge.takeReleasedOffsets().isEmpty, "nothing released, nothing to store")

        merge.removeAll(partition: 1)
        #expect(merge.isEmpty)
        #expect(release(&merge, atEnd: allAtEnd).isEmpty)
    }

    @Test("a pair's stream time: the newest message time released, only forward, started again by a revoke or rewind")
    func streamTimes() {
        var merge = makeMerge()
        merge.append(Record(partition: 0, offset: 10, timestampMilliseconds: 200), kind: .positions)
        merge.append(Record(partition: 0, offset: 11, timestampMilliseconds: 400), kind: .positions)
        merge.append(Record(partition: 0, offset: 5, timestampMilliseconds: 300), kind: .commands)
        merge.append(Record(partition: 2, offset: 7, timestampMilliseconds: 100), kind: .positions)
        let first = releaseWithStreamTimes(&merge, atEnd: allAtEnd)
        // Each record with the time before it: nothing yet for a pair's first.
        #expect(first.map(\.record) == ["p0@10", "c0@5", "p0@11", "p2@7"])
        #expect(first.map(\.streamTime) == [Int64.min, 200, 300, Int64.min])
        #expect(
            merge.takeStreamAdvances() == [
                StreamClock.Advance(partition: 0, time: 400), StreamClock.Advance(partition: 2, time: 100),
            ]
        )
        #expect(merge.takeStreamAdvances().isEmpty, "taken advances are forgotten")

        // A record stamped earlier than the pair's time leaves it where it is.
        merge.append(Record(partition: 0, offset: 12, timestampMilliseconds: 350), kind: .positions)
        merge.append(Record(partition: 2, offset: 8, timestampMilliseconds: 900), kind: .positions)
        let second = releaseWithStreamTimes(&merge, atEnd: allAtEnd)
        #expect(second.map(\.streamTime) == [400, 100], "the time before each, from the pair's earlier releases")
        #expect(merge.takeStreamAdvances() == [StreamClock.Advance(partition: 2, time: 900)])

        // Revoked, the pair's time comes from what it releases next, even if older.
        merge.removeAll(partition: 2)
        merge.append(Record(partition: 2, offset: 8, timestampMilliseconds: 900), kind: .positions)
        merge.append(Record(partition: 0, offset: 13, timestampMilliseconds: 360), kind: .positions)
        _ = releaseWithStreamTimes(&merge, atEnd: allAtEnd)
        #expect(merge.takeStreamAdvances() == [StreamClock.Advance(partition: 2, time: 900)])

        // A rewind reads from older offsets again: every pair starts again.
        merge.rewind()
        merge.append(Record(partition: 0, offset: 10, timestampMilliseconds: 200), kind: .positions)
        _ = releaseWithStreamTimes(&merge, atEnd: allAtEnd)
        #expect(merge.takeStreamAdvances() == [StreamClock.Advance(partition: 0, time: 200)])
    }
}
