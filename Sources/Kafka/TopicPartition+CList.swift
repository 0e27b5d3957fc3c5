import CRdKafka
import PartitionOffsets

extension TopicPartition {
    /// The partitions of a librdkafka list, in list order.
    static func array(from list: UnsafePointer<rd_kafka_topic_partition_list_t>) -> [TopicPartition] {
        UnsafeBufferPointer(start: list.pointee.elems, count: Int(list.pointee.cnt)).map {
            TopicPartition(String(cString: $0.topic), $0.partition)
        }
    }

    /// The partitions and their offsets of a librdkafka list, in list order.
    static func offsets(
        from list: UnsafePointer<rd_kafka_topic_partition_list_t>
    ) -> [(TopicPartition, Int64, rd_kafka_resp_err_t)] {
        UnsafeBufferPointer(start: list.pointee.elems, count: Int(list.pointee.cnt)).map {
            (TopicPartition(String(cString: $0.topic), $0.partition), $0.offset, $0.err)
        }
    }

    /// A new librdkafka list of these partitions at these offsets; the caller destroys it.
    static func makeList(_ entries: [(TopicPartition, Int64)]) -> UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    {
        let list = rd_kafka_topic_partition_list_new(Int32(entries.count))!
        for (partition, offset) in entries {
            rd_kafka_topic_partition_list_add(list, partition.topic, partition.partition).pointee.offset = offset
        }
        return list
    }
}
