public import Logging

/// The Kafka layer's structured log metadata keys.
///
/// One style (lower case, words joined by `_`), so that a log pipeline can index them; the service's keys, in the
/// same style, are the Worker module's `ServiceLogKey`.
public enum KafkaLogKey {
    /// A librdkafka error: its name, code and text.
    public static let kafkaError: Logger.Metadata.Key = "kafka_error"
    /// The librdkafka subsystem a log line comes from (`FETCH`, `REQTMOUT`, ...).
    public static let rdkafkaFacility: Logger.Metadata.Key = "rdkafka_facility"
    /// Topic partitions, as `topic[partition]` each.
    public static let partitions: Logger.Metadata.Key = "partitions"
    /// How long something was waited for.
    public static let waited: Logger.Metadata.Key = "waited"
}
