import Kafka

/// Records the producer could not deliver for good (not an outage, which deliveries wait out): the broker
/// refused them (authorization, a deleted topic, a record it rejects) or the producer failed.
struct DeliveryRefusal: Error, Sendable, CustomStringConvertible {
    /// How many records were refused, by topic and by librdkafka error name.
    let counts: [String: [String: Int]]
    /// The first refused record's error.
    let firstError: KafkaError?

    init(reports: [DeliveryReport]) {
        var counts: [String: [String: Int]] = [:]
        for report in reports {
            counts[report.topic, default: [:]][report.error?.code.name ?? "unknown", default: 0] += 1
        }
        self.counts = counts
        self.firstError = reports.first?.error
    }

    var description: String { firstError.map { "\($0)" } ?? "refused" }
}
