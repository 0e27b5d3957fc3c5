import Kafka
import Testing

@testable import Worker

@Suite("Which polls' records an input partition's end covers", .timeLimit(.minutes(5)))
struct EndConfirmationsTests {
    let commands = TopicPartition("commands", 0)

    func covers(_ ends: EndConfirmations, readTo end: Int64?) -> Int? {
        let side: PartitionPairMerge<String>.Side = ends.side(of: commands, readTo: end, highWatermark: nil)
        return side.endCoversPoll
    }

    @Test("an end-of-partition event covers the polls before the one that brought it, not that one")
    func eventCoversEarlierPolls() {
        var ends = EndConfirmations()
        ends.polled(reachedEnd: [:])
        ends.polled(reachedEnd: [commands: 7])
        #expect(ends.poll == 2)
        #expect(covers(ends, readTo: 7) == 1)
        #expect(covers(ends, readTo: 9) == nil, "a later end is not covered by what was known of an earlier one")
    }

    @Test("the broker's end covers every poll so far when it agrees; past it, it is a watermark to wait for")
    func brokerEnds() {
        var ends = EndConfirmations()
        ends.polled(reachedEnd: [commands: 7])
        ends.polled(reachedEnd: [:])
        ends.polled(reachedEnd: [:])
        ends.confirm([commands: 7], askedAfterPoll: 3, readTo: [commands: 7])
        #expect(covers(ends, readTo: 7) == 3)

        ends.polled(reachedEnd: [:])
        ends.confirm([commands: 9], askedAfterPoll: 4, readTo: [commands: 7])
        #expect(covers(ends, readTo: 7) == 3, "not moved on by an end past what was read")
        let side: PartitionPairMerge<String>.Side = ends.side(of: commands, readTo: 7, highWatermark: 7)
        #expect(side.highWatermark == 9, "the partition holds more than librdkafka showed: the merge waits for it")
    }
}
