public import Logging

/// The keys of the project's structured log metadata, in one enum.
///
/// One style (lower case, words joined by `_`), so that a log pipeline can index them. The Kafka layer's keys
/// are here; the service adds its own in an extension (the Worker module's `LogKey+Service.swift`).
public enum LogKey {
    /// A librdkafka error: its name, code and text.
    public static let kafkaError: Logger.Metadata.Key = "kafka_error"
    /// The librdkafka subsystem a log line comes from (`FETCH`, `REQTMOUT`, ...).
    public static let rdkafkaFacility: Logger.Metadata.Key = "rdkafka_facility"
    /// Topic partitions, as `topic[partition]` each.
    public static let partitions: Logger.Metadata.Key = "partitions"
}
