import Kafka
import PartitionOffsets

/// What the loop knows of its input partitions' ends, and which polls' records each end covers: what the merge needs
/// before it lets one side of a pair go ahead of the other, read to its end (``PartitionPairMerge/Side/endCoversPoll``).
///
/// An end covers a record of the other side only when the broker gave it after that record was polled: the broker's
/// answer to "where does the partition end" (``EndQuestions``, asked by the loop for the ends the merge found not
/// covering a record) covers the polls before the question when it agrees with the end; when it is past the end, the
/// partition holds more and the merge waits for it like any lagging side.
///
/// An end-of-partition event covers nothing, whenever it is polled: it is as old as the broker's answer to the fetch
/// that brought it, and nothing orders that answer after the other side's record. The partitions of a pair may have
/// different leaders, each fetched on a connection of its own: a commands fetch answered "at the end" before a command
/// and the positions after it were produced can reach the consumer after those positions, fetched from the other
/// leader (a slow leader; or librdkafka's mock cluster, which holds an empty fetch for `fetch.wait.max.ms` with the
/// answer it made when the request came). Taken as covering the polls before its own, such an event let the positions
/// go ahead of the command (issue 62, met by an instance's first fetch of partitions it was just given). On one
/// leader, librdkafka's parsing of a response partition by partition lets a record reach the loop before the other
/// partition's part of the same response, with its new end.
///
/// Pure: the loop numbers its polls and passes in what the broker said.
struct EndConfirmations {
    /// The number of the loop's current poll, the one whose records were appended last.
    private(set) var poll = 0
    /// Per partition, an end and the last poll whose records it covers.
    private var covered: [TopicPartition: (end: Int64, throughPoll: Int)] = [:]
    /// Ends the broker gave past what the consumer had read to: the partition holds at least that much.
    private var knownEnds: [TopicPartition: Int64] = [:]

    /// Starts the next poll's number.
    mutating func polled() {
        poll += 1
    }

    /// Takes the broker's ends of partitions, asked after poll `asked`: each that agrees with the end the consumer has
    /// read to covers the polls through `asked`; one past it is remembered as a watermark.
    mutating func confirm(
        _ brokerEnds: [TopicPartition: Int64],
        askedAfterPoll asked: Int,
        readTo atEnd: [TopicPartition: Int64]
    ) {
        for (partition, brokerEnd) in brokerEnds {
            if let end = atEnd[partition], brokerEnd <= end {
                cover(partition, end: end, throughPoll: asked)
            } else {
                knownEnds[partition] = max(brokerEnd, knownEnds[partition] ?? .min)
            }
        }
    }

    /// What the merge is told of one side: the end read to, the latest watermark known (librdkafka's, or the broker's
    /// answer), and the last poll that end covers.
    func side<Record>(
        of partition: TopicPartition,
        readTo end: Int64?,
        highWatermark: Int64?
    ) -> PartitionPairMerge<Record>.Side {
        let known = knownEnds[partition]
        let watermark = known.map { max($0, highWatermark ?? .min) } ?? highWatermark
        let covers = covered[partition].flatMap { $0.end == end ? $0.throughPoll : nil }
        return PartitionPairMerge<Record>.Side(end: end, highWatermark: watermark, endCoversPoll: covers)
    }

    private mutating func cover(_ partition: TopicPartition, end: Int64, throughPoll: Int) {
        if let current = covered[partition], current.end == end, current.throughPoll >= throughPoll { return }
        covered[partition] = (end, throughPoll)
    }
}
