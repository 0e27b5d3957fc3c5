import Foundation
import Kafka
import Logging
import Worker

/// The Kafka a demo runs on, and the demo's names there: the embedded mock cluster with fixed names, or a user's
/// cluster with names of this run's own (so that a run never meets an earlier run's messages or committed offsets).
///
/// Holds the embedded cluster for as long as the demo runs.
struct DemoKafka {
    /// What the demo says its Kafka is.
    let name: String
    let brokers: String
    let topics: WorkerConfiguration.Topics
    let groupId: String
    /// librdkafka properties for every client, `consumer.`/`producer.` prefixes as for `geoworker run`.
    private let kafkaProperties: [String: String]
    private let cluster: MockCluster?
    private let logger: Logger

    init(_ broker: Demo.Broker, logger: Logger) throws {
        self.logger = logger
        switch broker {
        case .embedded:
            let cluster = try MockCluster(brokers: 1, logger: logger)
            self.cluster = cluster
            name = "embedded Kafka"
            brokers = cluster.bootstrapServers
            topics = WorkerConfiguration.Topics(
                positions: "positions",
                commands: "commands",
                events: "events",
                deadLetters: "geoworker-dead-letters"
            )
            groupId = "geoworker-demo"
            kafkaProperties = Demo.groupTiming
        case .existing(let brokers, let properties):
            cluster = nil
            name = "Kafka"
            self.brokers = brokers
            let run = "geoworker-demo-" + UUID().uuidString.prefix(8).lowercased()
            topics = WorkerConfiguration.Topics(
                positions: run + "-positions",
                commands: run + "-commands",
                events: run + "-events",
                deadLetters: run + "-dead-letters"
            )
            groupId = run
            kafkaProperties = Demo.groupTiming.merging(properties) { $1 }
        }
    }

    /// The topics, as the demo prints them.
    var topicList: String {
        [topics.positions, topics.commands, topics.events, topics.deadLetters].joined(separator: ", ")
    }

    /// Creates the input, event and dead-letter topics; on the embedded cluster (which has no CreateTopics) the
    /// changelog too, which the worker creates itself on a real one.
    ///
    /// - Throws: `CommandFailure` naming the topic and the cluster's reason (a cluster that lets no client create
    ///   topics: create them by hand, or give the demo rights to).
    func createTopics() async throws {
        let all = [
            (topics.positions, Demo.partitions), (topics.commands, Demo.partitions), (topics.events, Demo.partitions),
            (topics.deadLetters, 1),
        ]
        if let cluster {
            for (topic, partitions) in all { try cluster.createTopic(topic, partitions: partitions) }
            try cluster.createTopic(DeviceChangelog.defaultTopic(groupId: groupId), partitions: Demo.partitions)
            return
        }
        let producer = try Producer(configuration: producerConfiguration, logger: logger)
        for (topic, partitions) in all {
            do {
                try await producer.createTopic(topic, partitions: partitions, configuration: Self.keptTopic)
            } catch {
                await producer.close(timeout: .zero)
                throw CommandFailure("geoworker demo: could not create topic \(topic) at \(brokers): \(error)")
            }
        }
        await producer.close(timeout: .zero)
    }

    /// The demo's topics on a user's cluster are left there for inspection, and the trace's messages carry the times
    /// it was recorded at: a broker's time retention (7 days by default) would delete them as soon as they arrive
    /// once the trace is older than that, and the demo would find nothing to read.
    static let keptTopic = ["retention.ms": "-1"]

    var producerConfiguration: ProducerConfiguration {
        ProducerConfiguration(brokers: brokers, kafkaProperties: kafkaProperties)
    }

    func consumerConfiguration(groupId: String) -> ConsumerConfiguration {
        ConsumerConfiguration(brokers: brokers, groupId: groupId, kafkaProperties: kafkaProperties)
    }

    /// A demo worker's settings: this Kafka, the demo's group, and `directory` for its state.
    func workerConfiguration(directory: String, untilCaughtUp: Bool) -> WorkerConfiguration {
        WorkerConfiguration(
            brokers: brokers,
            topics: topics,
            groupId: groupId,
            stateDir: directory,
            untilCaughtUp: untilCaughtUp,
            kafkaProperties: kafkaProperties
        )
    }
}
