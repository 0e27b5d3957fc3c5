import Kafka

/// What the loop knows of its input partitions' ends, and which polls' records each end covers: what the merge needs
/// before it lets one side of a pair go ahead of the other, read to its end (``PartitionPairMerge/Side/endCoversPoll``).
///
/// librdkafka parses a fetch response partition by partition, storing each one's high watermark and handing out its
/// records as it goes: a record of one partition can reach the loop while another partition's part of the same
/// response, holding records produced before it, is still unparsed, its watermark still the old end. So an end covers
/// a record only when it was known after that record was polled:
/// - an end-of-partition event covers the records of the polls before the one that brought it (the consumer's queue
///   hands out what was parsed in order, so a record polled earlier came from that response or an earlier one);
/// - the broker's answer to "where does the partition end" (``EndQuestions``, asked by the loop for the ends the merge
///   found not covering a record) covers the polls before the question when it agrees with the end; when it is past
///   the end, the partition holds more and the merge waits for it like any lagging side.
///
/// Pure: the loop numbers its polls and passes in what the consumer and the broker said.
struct EndConfirmations {
    /// The number of the loop's current poll, the one whose records were appended last.
    private(set) var poll = 0
    /// Per partition, an end and the last poll whose records it covers.
    private var covered: [TopicPartition: (end: Int64, throughPoll: Int)] = [:]
    /// Ends the broker gave past what the consumer had read to: the partition holds at least that much.
    private var knownEnds: [TopicPartition: Int64] = [:]

    /// Starts the next poll's number; `reachedEnd` are the partitions whose end-of-partition events it brought, each
    /// with the end it reported.
    mutating func polled(reachedEnd: [TopicPartition: Int64]) {
        poll += 1
        for (partition, end) in reachedEnd { cover(partition, end: end, throughPoll: poll - 1) }
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
