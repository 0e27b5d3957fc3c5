public import ArgumentParser
import Dispatch
import Foundation
import Logging
import Worker

/// `geoworker run`: the service.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Consume positions and commands from Kafka, publish geofence, country and language events.",
        discussion: """
            The positions and commands topics must exist, be keyed by deviceId and have the same number of
            partitions. SIGTERM or SIGINT finishes the batch in flight, persists, commits, leaves the group
            and exits 0.
            """
    )

    @Option(help: "Kafka bootstrap servers, host:port[,host:port...].")
    var brokers = "localhost:9092"

    @Option(help: "Topic of device positions.")
    var positionsTopic = "positions"

    @Option(help: "Topic of track/untrack commands (co-partitioned with the positions topic).")
    var commandsTopic = "commands"

    @Option(help: "Topic the events are published to.")
    var eventsTopic = "events"

    @Option(help: "Topic for messages that cannot be decoded or carried out (original bytes + reason header).")
    var deadLetterTopic = "geoworker-dead-letters"

    @Option(help: "Consumer group id.")
    var groupId = "geoworker"

    @Option(help: "Directory of the SQLite state (devices, pins, input offsets).")
    var stateDir = "./geoworker-state"

    @Option(
        name: .customLong("kafka"),
        parsing: .singleValue,
        help: ArgumentHelp("Any librdkafka property, for SASL/SSL and tuning (repeatable).", valueName: "KEY=VALUE")
    )
    var kafkaProperties: [String] = []

    @Flag(help: "Exit once every assigned partition has been processed to its end.")
    var untilCaughtUp = false

    @Option(help: "Milliseconds a partition pair waits for an empty side before going on without it.")
    var mergeWaitMs = 200

    @Option(help: "Milliseconds between checkpoints (state and offsets persisted after delivery).")
    var checkpointIntervalMs = 1000

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        for property in kafkaProperties where !property.contains("=") {
            throw ValidationError("--kafka takes KEY=VALUE (got \(property)).")
        }
        guard mergeWaitMs >= 0, checkpointIntervalMs > 0 else {
            throw ValidationError("--merge-wait-ms must be >= 0 and --checkpoint-interval-ms > 0.")
        }
    }

    func run() throws {
        logLevel.bootstrapStandardErrorLogging()
        var properties: [String: String] = [:]
        for property in kafkaProperties {
            let parts = property.split(separator: "=", maxSplits: 1)
            properties[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        let worker = try Worker(
            configuration: WorkerConfiguration(
                brokers: brokers,
                topics: InputProcessor.Topics(
                    positions: positionsTopic,
                    commands: commandsTopic,
                    events: eventsTopic,
                    deadLetters: deadLetterTopic
                ),
                groupID: groupId,
                stateDirectory: stateDir,
                mergeWait: .milliseconds(mergeWaitMs),
                checkpointInterval: .milliseconds(checkpointIntervalMs),
                untilCaughtUp: untilCaughtUp,
                kafkaProperties: properties
            )
        )
        let signals = StopSignals(stop: worker.stop)
        defer { withExtendedLifetime(signals) {} }
        do {
            try worker.run()
        } catch {
            Logger(label: "geoworker").critical("\(error)")
            throw ExitCode.failure
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {
    /// Logs of this level and above go to standard error (the commands' one logging set-up).
    func bootstrapStandardErrorLogging() {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = self
            return handler
        }
    }
}

/// Calls `stop` on SIGTERM or SIGINT (once; a second signal kills as usual).
final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    init(stop: @escaping @Sendable () -> Void) {
        sources = [SIGTERM, SIGINT].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                stop()
                signal(signalNumber, SIG_DFL)
            }
            source.resume()
            return source
        }
    }
}
