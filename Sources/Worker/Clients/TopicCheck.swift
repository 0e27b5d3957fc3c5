import Foundation
import Kafka
import Logging

/// The worker's start-up check of its topics: every topic exists, the input topics are co-partitioned, and
/// the changelog (when on) exists with their partition count, created when missing.
///
/// Runs on the producer's connection, before the consumer joins the group, so a worker that cannot run
/// never takes partitions from the members that can.
struct TopicCheck {
    let configuration: WorkerConfiguration
    let client: Producer
    let logger: Logger
    /// How long one metadata request may wait for a broker: a worker started before its brokers tries again
    /// after a back-off (``WorkerAssembly/connect(logger:clock:unless:)``), and a stop waits for at most
    /// this long.
    static let metadataTimeout: Duration = .seconds(3)

    /// Refuses to run unless every topic exists and both input topics have the same partition count.
    ///
    /// - Returns: the input topics' partition count.
    /// - Throws: ``WorkerError`` `topics` naming the missing topic, or both counts.
    func run() throws(WorkerError) -> Int {
        let topics = configuration.topics
        var counts: [String: Int] = [:]
        for topic in [topics.positions, topics.commands, topics.events, topics.deadLetters] {
            do {
                counts[topic] = try client.partitionCount(topic: topic, timeout: Self.metadataTimeout)
            } catch {
                throw WorkerError(.topics, "topic \(topic)", underlying: error)
            }
        }
        guard counts[topics.positions] == counts[topics.commands] else {
            throw WorkerError(
                .topics,
                "\(topics.positions) has \(counts[topics.positions]!) partitions and \(topics.commands) has "
                    + "\(counts[topics.commands]!): the input topics must be co-partitioned (same partition count, "
                    + "both keyed by deviceId)"
            )
        }
        if configuration.changelogSettings.enabled {
            try checkChangelog(configuration.changelogTopic, partitions: counts[topics.positions]!)
        }
        return counts[topics.positions]!
    }

    /// Makes sure the changelog topic exists with the positions topic's partition count, creating it when it
    /// is missing (Admin API, compacted).
    ///
    /// - Throws: ``WorkerError`` `topics` when its partition count differs, or when it is missing and the
    ///   cluster did not create it: the message says how to create it by hand.
    private func checkChangelog(_ topic: String, partitions: Int) throws(WorkerError) {
        let existing: Int
        do {
            existing = try client.partitionCount(topic: topic)
        } catch  where error.code == .unknownTopicOrPartition {
            existing = try createChangelog(topic, partitions: partitions)
        } catch {
            throw WorkerError(.topics, "topic \(topic)", underlying: error)
        }
        guard existing == partitions else {
            throw WorkerError(
                .topics,
                "the changelog topic \(topic) has \(existing) partitions and \(configuration.topics.positions) has "
                    + "\(partitions): the changelog must be co-partitioned with the input (a device's record goes to "
                    + "the partition of its input partition's number)"
            )
        }
    }

    private func createChangelog(_ topic: String, partitions: Int) throws(WorkerError) -> Int {
        let replication = configuration.changelogSettings.replicationFactor
        do {
            try client.createTopic(
                topic,
                partitions: partitions,
                replicationFactor: replication,
                configuration: DeviceChangelog.topicConfiguration
            )
            logger.notice(
                "created the changelog topic",
                metadata: [
                    ServiceLogKey.topic: "\(topic)", KafkaLogKey.partitions: "\(partitions)",
                    ServiceLogKey.replicationFactor: "\(replication)",
                ]
            )
        } catch {
            let factor = replication > 0 ? "\(replication)" : "<replicas>"
            throw WorkerError(
                .topics,
                "the changelog topic \(topic) is missing and the cluster did not create it (\(error)); create it "
                    + "with: kafka-topics.sh --bootstrap-server \(configuration.brokers) --create --topic \(topic) "
                    + "--partitions \(partitions) --replication-factor \(factor) --config cleanup.policy=compact"
            )
        }
        // A new topic's metadata reaches every broker a moment later.
        for _ in 0..<50 {
            if let count = try? client.partitionCount(topic: topic) { return count }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw WorkerError(.topics, "the changelog topic \(topic) was created but does not show in the metadata")
    }
}
