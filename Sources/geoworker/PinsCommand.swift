import ArgumentParser
import Configuration
import Foundation
import GeoCore
import JSONCodec
import Kafka
import StateStore
import Worker

/// `geoworker pins`: produce track/untrack commands, list the pins a worker holds.
struct PinsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "Track and untrack pins (produces commands) and list stored pins.",
        subcommands: [Track.self, Untrack.self, List.self]
    )

    /// Where commands go.
    struct Destination: ParsableArguments {
        @OptionGroup var connection: KafkaConnection

        @Option(help: "The commands topic (env GEOWORKER_TOPICS_COMMANDS; default commands).")
        var commandsTopic: String?

        /// Produces `command` keyed by its device id, stamped now, and waits for the broker to take it.
        ///
        /// Only to a commands topic the worker reads: one that exists with the positions topic's partition count (a
        /// mistyped name would otherwise be created by the broker with one partition, and the command never read).
        func send(_ command: DeviceCommand) async throws {
            let settings = try await connection.configuration(
                ["topics.commands": commandsTopic.map(ConfigContent.string)],
                tool: "geoworker pins"
            )
            let topic = settings.topics.commands
            let producer = try Producer(configuration: settings.producerConfiguration)
            do {
                try await Self.checkTopics(settings, producer)
            } catch {
                await producer.close(timeout: .seconds(1))
                throw error
            }
            let json = command.json
            let report = await producer.send(
                ProducerRecord(
                    topic: topic,
                    key: Array(command.deviceId.utf8),
                    value: json,
                    timestampMilliseconds: Int64(Date().timeIntervalSince1970 * 1000)
                )
            )
            await producer.close()
            guard report.isDelivered else {
                throw CommandFailure("geoworker pins: not delivered to \(topic) at \(settings.brokers): \(report)")
            }
            print(String(decoding: json, as: UTF8.self))
        }

        /// Refuses a commands topic that does not exist or is not co-partitioned with the positions topic (when that
        /// one is found under its setting), and a cluster that does not answer within 10 s.
        private static func checkTopics(_ settings: ToolConfiguration, _ producer: Producer) async throws {
            let (commands, positions) = (settings.topics.commands, settings.topics.positions)
            func partitionCount(_ topic: String) async throws -> Int? {
                do {
                    return try await producer.partitionCount(topic: topic, timeout: .seconds(10))
                } catch  where error.code == .unknownTopicOrPartition {
                    return nil
                } catch {
                    throw CommandFailure(
                        "geoworker pins: cannot reach Kafka at \(settings.brokers) within 10 s (\(error))"
                    )
                }
            }
            guard let commandPartitions = try await partitionCount(commands) else {
                throw CommandFailure(
                    "geoworker pins: there is no topic \(commands) at \(settings.brokers): name the one the worker reads "
                        + "(its topics.commands) with --commands-topic or GEOWORKER_TOPICS_COMMANDS, or create the "
                        + "topics with geoworker topics create"
                )
            }
            if let positionPartitions = try await partitionCount(positions), positionPartitions != commandPartitions {
                throw CommandFailure(
                    "geoworker pins: \(commands) has \(commandPartitions) partitions and \(positions) has "
                        + "\(positionPartitions): the worker reads a device's commands in the partition of its "
                        + "positions, so a command sent there would not meet them (geoworker topics check)"
                )
            }
        }
    }

    struct Track: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start watching a pin for a device.")

        @Option(help: "The device id.") var device: String
        @Option(help: "The pin id (tracking an id again replaces that pin).") var id: String
        @OptionGroup var definition: PinDefinitionOptions
        @OptionGroup var destination: Destination

        func run() async throws {
            // The pin is checked by the worker's own decoder, so the tool refuses exactly what the worker would.
            var pin = try definition.members()
            pin["id"] = id
            let message: [String: Any] = ["type": "track", "deviceId": device, "pin": pin]
            let json = try JSONSerialization.data(withJSONObject: message)
            let decoded = json.withUnsafeBytes { DeviceCommand.decode(json: $0) }
            switch decoded {
            case .success(let command): try await destination.send(command)
            case .failure(let failure):
                // Name the options the user gave rather than the message's members.
                let problem = PinDefinitionOptions.inOptionWords(failure.description, prefix: "pin.")
                    .replacingOccurrences(of: "deviceId", with: "--device")
                throw CommandFailure("The pin is not one geoworker tracks: \(problem).")
            }
        }
    }

    struct Untrack: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop watching one pin, or all (--all).")

        @Option(help: "The device id.") var device: String
        @Option(help: "The pin id.") var id: String?
        @Flag(help: "Untrack every pin of the device.") var all = false
        @OptionGroup var destination: Destination

        func validate() throws {
            guard (id != nil) != all else { throw ValidationError("Give either --id or --all.") }
        }

        func run() async throws {
            try await destination.send(
                id.map { .untrack(deviceId: device, pinId: $0) } ?? .untrackAll(deviceId: device)
            )
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the pins stored in a worker's state directory (safe while the worker runs).",
            discussion: """
                Shows what the worker had stored when it last wrote its state: a command that announces an event \
                (a track) within a second or so, one that announces nothing (an untrack) at its next store, every \
                storeIntervalMs (10 s by default). Standard error says when the state was last written.
                """
        )

        @Option(help: "The worker's state directory (env GEOWORKER_STATE_DIR; default ./geoworker-state).")
        var stateDir: String?

        @Option(help: "Only this device.") var device: String?

        @Flag(help: "One JSON object per device instead of text.") var json = false

        func run() async throws {
            let directory: String
            do {
                directory = try ToolConfiguration(
                    config: try await Settings.reader(flags: ["stateDir": stateDir.map(ConfigContent.string)])
                ).stateDir
            } catch let error as WorkerError {
                throw CommandFailure("geoworker pins list: \(error.message)")
            }
            guard FileManager.default.fileExists(atPath: directory + "/" + StateStore.fileName) else {
                throw CommandFailure("geoworker pins list: no geoworker state in \(directory)")
            }
            // Said on standard error, where it does not mix with the listing a script reads.
            FileHandle.standardError.write(Data((Self.storedNote(directory) + "\n").utf8))
            let devices = try StateStore(directory: directory).loadDevices()
                .filter { device == nil || $0.deviceId == device }
                .filter { !$0.pins.isEmpty }
                .sorted { $0.deviceId < $1.deviceId }
            for state in devices {
                if json {
                    let pins: [[String: Any]] = state.pins.map { (tracked: TrackedPin) -> [String: Any] in
                        var pin: [String: Any] = ["id": tracked.pin.id, "state": "\(tracked.membership)"]
                        switch tracked.pin.shape {
                        case .circle(let center, let radius):
                            pin["lat"] = center.latitude
                            pin["lon"] = center.longitude
                            pin["radius"] = radius
                        case .polygon(let polygon):
                            let coordinates: Any = polygon.isMulti ? polygon.coordinates : polygon.coordinates[0]
                            pin["shape"] = [
                                "type": polygon.isMulti ? "MultiPolygon" : "Polygon", "coordinates": coordinates,
                            ]
                        }
                        pin["title"] = tracked.pin.title
                        pin["dwellSeconds"] = tracked.pin.dwellSeconds
                        pin["approachSeconds"] = tracked.pin.approachSeconds
                        pin["since"] = tracked.since.map { Timestamp.rfc3339($0) }
                        return pin
                    }
                    let object: [String: Any] = ["deviceId": state.deviceId, "pins": pins]
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    for tracked in state.pins {
                        let pin = tracked.pin
                        let area =
                            switch pin.shape {
                            case .circle(let center, let radius):
                                "\(center.latitude),\(center.longitude)  r=\(radius) m"
                            case .polygon(let polygon):
                                "polygon of \(polygon.vertexCount) vertices in [\(polygon.bounds.west),"
                                    + "\(polygon.bounds.south),\(polygon.bounds.east),\(polygon.bounds.north)]"
                            }
                        print(
                            "\(state.deviceId)  \(pin.id)  \(area)  \(tracked.membership)"
                                + (pin.title.map { "  \($0)" } ?? "")
                        )
                    }
                }
            }
        }

        /// When the state in `directory` was last written (its store or the store's write-ahead log, whichever is
        /// newer), and what that means for the commands of the last seconds.
        static func storedNote(_ directory: String, now: Date = Date()) -> String {
            let written = [StateStore.fileName, StateStore.fileName + "-wal"].compactMap {
                try? FileManager.default.attributesOfItem(atPath: directory + "/" + $0)[.modificationDate] as? Date
            }.max()
            let when = written.map { "\(Int(now.timeIntervalSince($0).rounded())) s ago" } ?? "at a time unknown"
            return "pins list: the state as the worker last wrote it, \(when); an untrack or other command that "
                + "announces nothing shows after its next store (every storeIntervalMs, 10 s by default)"
        }
    }
}
