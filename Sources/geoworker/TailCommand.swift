import ArgumentParser
import Configuration
import Foundation
import Kafka
import PartitionOffsets
import Worker

/// `geoworker tail`: follows the events topic, one readable line per event.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the events topic, one readable line per event (or the raw CloudEvents with --json).",
        discussion: """
            Reads every partition outside any consumer group, so it never takes partitions from a worker or \
            moves committed offsets. Follows new events until interrupted, unless --until-end. Reads committed \
            events only (isolation.level=read_committed): under exactly-once an event shows once its checkpoint's \
            transaction commits; --uncommitted shows those of open and aborted transactions too.
            """
    )

    @OptionGroup var connection: KafkaConnection

    @Option(help: "The events topic (env GEOWORKER_TOPICS_EVENTS; default events).")
    var topic: String?

    @Flag(help: "Start with the oldest event the topic still holds instead of new events only.")
    var fromBeginning = false

    @Flag(help: "Exit once the end of every partition is reached.")
    var untilEnd = false

    @Flag(help: "Print each event's CloudEvents JSON as it is on the topic, one per line.")
    var json = false

    @Flag(
        help:
            "Show events of open and aborted transactions too (isolation.level=read_uncommitted); by default only committed ones."
    )
    var uncommitted = false

    func run() async throws {
        let settings = try await connection.configuration(
            ["topics.events": topic.map(ConfigContent.string)],
            tool: "geoworker tail"
        )
        let brokers = settings.brokers
        let topic = settings.topics.events
        var configuration = settings.consumerConfiguration(groupId: "geoworker-tail")
        if uncommitted {
            configuration.properties["isolation.level"] = "read_uncommitted"
        } else if configuration.properties["isolation.level"] == nil {
            configuration.properties["isolation.level"] = "read_committed"
        }
        let lookup = try Consumer(configuration: configuration, subscription: .partitions([:]))
        let partitions: Int
        do {
            partitions = try await lookup.partitionCount(topic: topic)
        } catch {
            await lookup.close()
            throw CommandFailure("geoworker tail: topic \(topic) at \(brokers): \(error)")
        }
        await lookup.close()

        var starts: [TopicPartition: StartOffset] = [:]
        for partition in 0..<Int32(partitions) {
            starts[TopicPartition(topic, partition)] = fromBeginning ? .beginning : .end
        }
        let consumer = try Consumer(configuration: configuration, subscription: .partitions(starts))
        // Ctrl-C ends the process as usual: tail holds no group membership and commits nothing.
        while true {
            let batch = try await consumer.nextBatch(timeout: .milliseconds(200))
            var text = ""
            for record in batch {
                guard let value = record.value else { continue }
                text += json ? String(decoding: value, as: UTF8.self) : EventLine.format(value)
                text += "\n"
            }
            if !text.isEmpty {
                FileHandle.standardOutput.write(Data(text.utf8))
            }
            if untilEnd && consumer.hasReachedEndOfAssignment { break }
        }
        await consumer.close()
    }
}
