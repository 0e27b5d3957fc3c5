import Foundation
import Kafka
public import Logging
import PartitionOffsets
public import ServiceLifecycle
import Synchronization

/// This instance's part in its group's directory (`http.advertisedAddress` set): it tells the group where its
/// operations port answers and which input partitions it holds, and reads what the others tell, into the
/// ``GroupDirectory`` the operations port asks.
///
/// The channel is a small compacted topic, `topics.instances` (`<groupId>-instances` by default; created with one
/// partition when missing, where the cluster lets clients create topics). librdkafka 2.0.2 cannot put an address into
/// the group's member metadata, and the group's description names no port, so the channel has to be a topic; it works
/// alike on every broker. Each instance writes an ``InstanceAdvert`` keyed by its name whenever its assignment
/// changes and every ``refreshInterval``, and a tombstone when it stops gracefully; it reads every partition of the
/// topic from its beginning, with a consumer outside the group.
///
/// An instance killed without a stop leaves its last advert: its partitions are still taken as its until another
/// instance says it took them (the group gives them to another at the session timeout), and the operations port names
/// it among those that did not answer meanwhile.
public final class GroupPresence: Service, Sendable {
    /// How often an instance says again what it holds when nothing changed.
    public static let refreshInterval: Duration = .seconds(30)

    /// What the group's instances said, read from the topic.
    public let directory: GroupDirectory
    private let topic: String
    private let configuration: WorkerConfiguration
    private let assignment: AssignedPartitions
    /// The advertised address as set, and the port the operations port listens on once it does.
    private let address: Mutex<(setting: String, port: Int?)>
    private let logger: Logger

    /// - Parameters:
    ///   - configuration: the worker's settings (brokers, group, Kafka properties, `topics.instances`).
    ///   - advertisedAddress: where other instances reach this one's operations port (`http://host:port`); without a
    ///     port, the port the server listens on is added (``listening(on:)``).
    ///   - assignment: the partitions the worker holds, as its rebalance hooks set them.
    ///   - logger: where it logs.
    public init(
        configuration: WorkerConfiguration,
        advertisedAddress: String,
        assignment: AssignedPartitions,
        logger: Logger
    ) {
        self.configuration = configuration
        topic = configuration.instancesTopic
        self.assignment = assignment
        self.logger = logger
        address = Mutex((advertisedAddress, nil))
        directory = GroupDirectory(instance: configuration.groupInstanceId ?? Self.runName())
    }

    /// A name for an instance without a `groupInstanceId`: the host and a random part, new at each start.
    private static func runName() -> String {
        "\(ProcessInfo.processInfo.hostName)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// The operations port listens on `port` (its setting may be 0: any free port).
    public func listening(on port: Int) {
        address.withLock { $0.port = port }
    }

    /// The address to advertise; nil until it is complete.
    var advertisedAddress: String? {
        address.withLock { address in
            Self.complete(address.setting, port: address.port)
        }
    }

    /// `setting` as given when it names a port, else with `port` added; nil while that port is not known.
    static func complete(_ setting: String, port: Int?) -> String? {
        guard var components = URLComponents(string: setting), components.host != nil else { return nil }
        // Peers add paths that begin with "/".
        if components.path == "/" { components.path = "" }
        if components.port == nil {
            guard let port else { return nil }
            components.port = port
        }
        return components.string
    }

    public func run() async throws {
        let producer: Producer
        do {
            producer = try Producer(
                configuration: ProducerConfiguration(
                    bootstrapServers: configuration.brokers,
                    clientId: "geoworker-presence",
                    linger: .milliseconds(1),
                    deliveryTimeout: .seconds(30),
                    properties: configuration.kafkaProperties(for: .producer)
                ),
                logger: logger
            )
        } catch {
            throw WorkerError(.kafka, "cannot create the instances topic's producer", underlying: error)
        }
        let partitions: Int
        do {
            // Kafka may not be there yet at start-up: waited for, as the worker waits.
            guard
                let found = try await whileKafkaIsAway(
                    "the instances topic",
                    logger: logger,
                    { () throws(WorkerError) in
                        try await checkTopic(with: producer)
                    }
                )
            else {
                await producer.close()
                return
            }
            partitions = found
        } catch {
            await producer.close()
            throw error
        }
        let consumer: Consumer
        do {
            consumer = try Consumer(
                configuration: KafkaClients.instancesConsumerConfiguration(configuration),
                subscription: .partitions(
                    Dictionary(
                        uniqueKeysWithValues: (0..<Int32(partitions)).map { (TopicPartition(topic, $0), .beginning) }
                    )
                ),
                logger: logger
            )
        } catch {
            await producer.close()
            throw WorkerError(.kafka, "cannot create the instances topic's consumer", underlying: error)
        }
        var told: AssignedPartitions.Snapshot?
        var toldAt = ContinuousClock.now
        var firstTold = false
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                for record in try await consumer.nextBatch(maxMessages: 1000, timeout: .milliseconds(200)) {
                    read(record)
                }
            } catch {
                logger.warning("cannot read the instances topic", metadata: [ServiceLogKey.error: "\(error)"])
                try? await Task.sleep(for: .seconds(1))
            }
            let now = assignment.snapshot
            guard let count = now.partitionCount, let address = advertisedAddress else { continue }
            guard now != told || ContinuousClock.now - toldAt >= Self.refreshInterval else { continue }
            let advert = InstanceAdvert(
                instance: directory.instance,
                address: address,
                partitions: Array(now.partitions),
                partitionCount: count,
                at: Int64((Date().timeIntervalSince1970 * 1000).rounded())
            )
            // Read back from the topic like the others' adverts; taken at once too, so that this instance's own
            // answers do not wait for the round trip.
            directory.apply(advert)
            let report = await producer.send(
                ProducerRecord(topic: topic, key: Array(directory.instance.utf8), value: advert.encoded())
            )
            if report.isDelivered {
                told = now
                toldAt = ContinuousClock.now
                if !firstTold {
                    firstTold = true
                    logger.info(
                        "told the group where this instance answers",
                        metadata: [
                            ServiceLogKey.topic: "\(topic)", ServiceLogKey.address: "\(address)",
                            ServiceLogKey.instance: "\(directory.instance)",
                        ]
                    )
                }
            } else {
                logger.warning(
                    "cannot tell the group which partitions this instance holds",
                    metadata: [ServiceLogKey.topic: "\(topic)", ServiceLogKey.error: "\(report)"]
                )
            }
        }
        // A graceful stop: the others stop asking this instance at once, not when another takes its partitions.
        let farewell = await producer.send(
            ProducerRecord(topic: topic, key: Array(directory.instance.utf8), value: nil)
        )
        if !farewell.isDelivered {
            logger.warning("cannot tell the group this instance stops", metadata: [ServiceLogKey.error: "\(farewell)"])
        }
        await consumer.close()
        await producer.close(timeout: .seconds(5))
    }

    private func read(_ record: ConsumerRecord) {
        guard let key = record.key.map({ String(decoding: $0, as: UTF8.self) }) else { return }
        guard let value = record.value else {
            directory.forget(key)
            return
        }
        guard let advert = InstanceAdvert.decode(value), advert.instance == key else {
            logger.warning(
                "skipped a record of the instances topic that is no instance's advert",
                metadata: [ServiceLogKey.topic: "\(topic)", ServiceLogKey.offset: "\(record.offset)"]
            )
            return
        }
        directory.apply(advert)
    }

    /// The instances topic's partition count; the topic is created (compacted, one partition) when missing and the
    /// cluster lets clients create topics.
    private func checkTopic(with producer: Producer) async throws(WorkerError) -> Int {
        do {
            return try await producer.partitionCount(topic: topic, timeout: TopicCheck.metadataTimeout)
        } catch  where error.code == .unknownTopicOrPartition {
            do {
                do {
                    try await producer.createTopic(topic, partitions: 1, configuration: ["cleanup.policy": "compact"])
                    logger.info("created the instances topic", metadata: [ServiceLogKey.topic: "\(topic)"])
                } catch {
                    // Another instance of the group, starting at the same time, may have created it first.
                    logger.debug(
                        "the instances topic was not created here",
                        metadata: [ServiceLogKey.error: "\(error)"]
                    )
                }
                return try await producer.partitionCount(topic: topic, timeout: TopicCheck.metadataTimeout)
            } catch {
                throw WorkerError(
                    .topics,
                    "the instances topic \(topic) (topics.instances) is missing and the cluster did not create it "
                        + "(\(error)); create it (compacted, one partition: geoworker topics create), or unset "
                        + "http.advertisedAddress",
                    underlying: error
                )
            }
        } catch {
            throw WorkerError(.kafka, "cannot read the instances topic \(topic)'s metadata", underlying: error)
        }
    }
}
