import ArgumentParser
import Configuration
import Foundation
import Kafka
import Logging
import Worker

/// `geoworker topics create|check`: the topics a worker reads and writes, made or checked through the Admin API, with
/// the settings `geoworker run` reads (flags, `GEOWORKER_*`, the config file), so that they are the ones it will use.
struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Create or check the topics geoworker reads and writes.",
        discussion: """
            The partition count is the most instances a group can use (each partition has one owner) and cannot \
            change once devices are stored: a device's partition is its id's hash modulo the count, and its state, \
            changelog record and commands are found by it. Choose it for the most instances you expect; 12 allows \
            1, 2, 3, 4, 6 or 12 instances with an even share each.
            """,
        subcommands: [Create.self, Check.self]
    )

    /// The settings that name the topics, as for `geoworker run`.
    struct Options: ParsableArguments {
        @OptionGroup var connection: KafkaConnection

        @Option(help: "JSON config file, as for run (env GEOWORKER_CONFIG).") var config: String?

        @Option(help: "The consumer group id, which names the changelog topic (env GEOWORKER_GROUP_ID).")
        var groupId: String?

        @Flag(help: "The fleet geofence catalog's topic too (env GEOWORKER_CATALOG_ENABLED).") var catalog = false

        @Flag(
            help:
                "The group's instances topic too, which instances with an advertised address use (when GEOWORKER_HTTP_ADVERTISED_ADDRESS or the config file sets http.advertisedAddress, without this flag)."
        )
        var instances = false

        /// The topics the worker these settings describe reads and writes, and their cluster.
        func survey(tool: String) async throws -> (plan: TopicPlan, cluster: TopicsOnCluster) {
            Logger.Level.warning.bootstrapStandardErrorLogging()
            var flags: [String: ConfigContent?] = [
                "brokers": connection.brokers.map(ConfigContent.string),
                "groupId": groupId.map(ConfigContent.string),
                "catalog.enabled": catalog ? .bool(true) : nil,
            ]
            flags["kafka"] = connection.kafkaProperties.isEmpty ? nil : .stringArray(connection.kafkaProperties)
            let worker: WorkerConfiguration
            let advertised: Bool
            do {
                let reader = try await Settings.reader(flags: flags, configFile: config)
                worker = try WorkerConfiguration(config: reader)
                advertised = try reader.scoped(to: "http").optionalText("advertisedAddress") != nil
            } catch let error as WorkerError {
                throw CommandFailure("\(tool): \(error.message)")
            }
            let producer = ProducerConfiguration(brokers: worker.brokers, kafkaProperties: worker.kafkaProperties)
            return (
                TopicPlan(worker, groupDirectory: instances || advertised),
                try TopicsOnCluster(producer, brokers: worker.brokers)
            )
        }

        /// Goes through the plan's topics in order, printing a line for each, then fails if what is there has problems.
        ///
        /// A topic that exists is printed as `existing`; one that does not, as what `missing` makes of it (what is
        /// there now, and the word for it).
        func walk(
            tool: String,
            existing: String,
            missing: (TopicPlan.Topic, TopicPlan, _ found: [String: TopicPlan.Found], TopicsOnCluster) async throws ->
                (found: TopicPlan.Found?, word: String)
        ) async throws {
            let (plan, cluster) = try await survey(tool: tool)
            var found: [String: TopicPlan.Found] = [:]
            do {
                for topic in plan.topics {
                    if let there = try await cluster.find(topic) {
                        found[topic.name] = there
                        print(plan.line(topic, there, existing))
                    } else {
                        let (made, word) = try await missing(topic, plan, found, cluster)
                        found[topic.name] = made
                        print(plan.line(topic, made, word))
                    }
                }
            } catch {
                await cluster.close()
                throw error
            }
            await cluster.close()
            let problems = plan.problems(found)
            guard problems.isEmpty else { throw CommandFailure("\(tool): " + problems.joined(separator: "; ")) }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the topics that are missing; check those that exist.",
            discussion: "The changelog and the geofence catalog are made compacted; the others keep the cluster's"
                + " retention."
        )

        @OptionGroup var options: Options

        @Option(help: "Partitions of each topic created (see `geoworker topics --help` on choosing it).")
        var partitions = 12

        @Option(help: "Replicas of each topic created; -1 takes the cluster's default.replication.factor.")
        var replicationFactor = -1

        func validate() throws {
            guard (1...10_000).contains(partitions) else { throw ValidationError("--partitions must be 1 to 10000.") }
            guard replicationFactor == -1 || (1...100).contains(replicationFactor) else {
                throw ValidationError("--replication-factor must be -1 or 1 to 100.")
            }
        }

        func run() async throws {
            try await options.walk(tool: "geoworker topics create", existing: "exists") { topic, plan, found, cluster in
                let count = plan.partitions(for: topic, found: found) ?? partitions
                try await cluster.create(topic, partitions: count, replicationFactor: replicationFactor)
                return (TopicPlan.Found(partitions: count, compacted: topic.compacted), "created")
            }
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check that every topic exists, the co-partitioned ones alike, the compacted ones compacted."
        )

        @OptionGroup var options: Options

        func run() async throws {
            try await options.walk(tool: "geoworker topics check", existing: "ok") { topic, _, _, _ in
                (nil, topic.createdByWorker ? "missing (the worker creates it)" : "missing")
            }
        }
    }
}

/// The cluster's side of `geoworker topics`: what exists, and creating what does not.
struct TopicsOnCluster {
    let producer: Producer
    let brokers: String

    init(_ configuration: ProducerConfiguration, brokers: String) throws {
        producer = try Producer(configuration: configuration)
        self.brokers = brokers
    }

    func close() async {
        await producer.close(timeout: .seconds(1))
    }

    /// The topic as it stands, nil when it does not exist.
    func find(_ topic: TopicPlan.Topic) async throws -> TopicPlan.Found? {
        let partitions: Int
        do {
            partitions = try await producer.partitionCount(topic: topic.name, timeout: .seconds(10))
        } catch  where error.code == .unknownTopicOrPartition {
            return nil
        } catch {
            throw CommandFailure("cannot read the metadata of \(topic.name) from \(brokers): \(error)")
        }
        var compacted: Bool?
        if topic.compacted {
            // A broker without DescribeConfigs leaves it unknown rather than failing the check.
            let settings = try? await producer.topicConfiguration(topic.name)
            compacted = settings.map { ($0["cleanup.policy"] ?? "").contains("compact") }
        }
        return TopicPlan.Found(partitions: partitions, compacted: compacted)
    }

    func create(_ topic: TopicPlan.Topic, partitions: Int, replicationFactor: Int) async throws {
        do {
            try await producer.createTopic(
                topic.name,
                partitions: partitions,
                replicationFactor: replicationFactor,
                configuration: topic.compacted ? ["cleanup.policy": "compact"] : [:]
            )
        } catch {
            throw CommandFailure("cannot create \(topic.name) at \(brokers): \(error)")
        }
    }
}
