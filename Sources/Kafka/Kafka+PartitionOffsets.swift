// A topic's partition and a span of its offsets are what the Kafka layer reads and writes, and what the state store
// keeps without knowing Kafka: their own module, which every user of the Kafka layer sees with it.
@_exported public import PartitionOffsets
