import Kafka
import PartitionOffsets
import Testing

@testable import Worker

@Suite("Which polls' records an input partition's end covers", .timeLimit(.minutes(5)))
struct EndConfirmationsTests {
    let commands = TopicPartition("commands", 0)

    func covers(_ ends: EndConfirmations, readTo end: Int64?) -> Int? {
        let side: PartitionPairMerge<String>.Side = ends.side(of: commands, readTo: end, highWatermark: nil)
        return side.endCoversPoll
    }

    @Test("the broker's end covers every poll so far when it agrees; past it, it is a watermark to wait for")
    func brokerEnds() {
        var ends = EndConfirmations()
        ends.polled()
        ends.polled()
        ends.polled()
        ends.confirm([commands: 7], askedAfterPoll: 3, readTo: [commands: 7])
        #expect(covers(ends, readTo: 7) == 3)
        #expect(covers(ends, readTo: 9) == nil, "a later end is not covered by what the broker said of an earlier one")

        ends.polled()
        ends.confirm([commands: 9], askedAfterPoll: 4, readTo: [commands: 7])
        #expect(covers(ends, readTo: 7) == 3, "not moved on by an end past what was read")
        let side: PartitionPairMerge<String>.Side = ends.side(of: commands, readTo: 7, highWatermark: 7)
        #expect(side.highWatermark == 9, "the partition holds more than librdkafka showed: the merge waits for it")
    }
}
