import ArgumentParser
import Configuration
import Foundation
import GeoCore
import JSONCodec
import Kafka
import PartitionOffsets
import Worker

/// `geoworker geofences`: put, delete, import and list the fleet catalog's geofences (`topics.geofences`).
struct GeofencesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geofences",
        abstract: "Put, delete, import and list the fleet catalog's geofences (the catalog topic).",
        discussion: """
            Devices watch the catalog's geofences by tag (subscribe commands, tracker.catalogTags) when the worker \
            runs with --catalog; docs/catalog.md. Every record is checked by the worker's own decoder before \
            anything is sent.
            """,
        subcommands: [Put.self, Delete.self, Import.self, List.self]
    )

    /// The catalog topic and how to reach it.
    struct Catalog: ParsableArguments {
        @OptionGroup var connection: KafkaConnection

        @Option(help: "The catalog topic (env GEOWORKER_TOPICS_GEOFENCES; default geofences).")
        var geofencesTopic: String?

        func settings(tool: String) async throws -> ToolConfiguration {
            try await connection.configuration(
                ["topics.geofences": geofencesTopic.map(ConfigContent.string)],
                tool: tool
            )
        }

        /// Produces `records` (a nil value deletes), keyed by geofence id and stamped now, once the topic is known to
        /// exist; waits for the broker to take every one.
        func send(_ records: [(id: String, json: [UInt8]?)], tool: String) async throws {
            let settings = try await settings(tool: tool)
            let topic = settings.topics.geofences
            let producer = try Producer(configuration: settings.producerConfiguration)
            do {
                _ = try await producer.partitionCount(topic: topic, timeout: .seconds(10))
            } catch {
                await producer.close()
                guard error.code == .unknownTopicOrPartition else {
                    throw CommandFailure("\(tool): cannot reach Kafka at \(settings.brokers) within 10 s (\(error))")
                }
                throw CommandFailure(
                    """
                    \(tool): there is no catalog topic \(topic) at \(settings.brokers): create it (compacted, any \
                    partition count), or name another with --geofences-topic
                    """
                )
            }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let reports = await producer.send(
                records.map {
                    ProducerRecord(topic: topic, key: Array($0.id.utf8), value: $0.json, timestampMilliseconds: now)
                }
            ).reports()
            await producer.close()
            let failed = reports.filter { !$0.isDelivered }
            guard failed.isEmpty else {
                throw CommandFailure(
                    "\(tool): \(failed.count) of \(records.count) not delivered to \(topic): \(failed.prefix(3))"
                )
            }
        }
    }

    /// A record's value as the worker reads it, or the decoder's reason for refusing it.
    static func checked(_ json: Data, id: String) -> Result<[UInt8], DecodingFailure> {
        let bytes = [UInt8](json)
        return bytes.withUnsafeBytes { CatalogGeofence.decode(json: $0, key: id) }.map { _ in bytes }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Put a geofence in the catalog (replacing one of that id)."
        )

        @Option(help: "The geofence id (the record's key).") var id: String
        @Option(help: "Its tags, comma-separated or repeated (1 to 32).") var tags: [String] = []
        @OptionGroup var definition: PinDefinitionOptions
        @OptionGroup var catalog: Catalog

        func run() async throws {
            var record = try definition.members()
            record["id"] = id
            record["tags"] = tags.flatMap { $0.split(separator: ",").map(String.init) }
            let json = try JSONSerialization.data(withJSONObject: record, options: [.sortedKeys])
            switch GeofencesCommand.checked(json, id: id) {
            case .success(let bytes):
                try await catalog.send([(id, bytes)], tool: "geoworker geofences put")
                print(String(decoding: bytes, as: UTF8.self))
            case .failure(let failure):
                let problem = PinDefinitionOptions.inOptionWords(failure.description, prefix: "")
                throw CommandFailure("The geofence is not one geoworker watches: \(problem).")
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Delete geofences from the catalog (a tombstone each: devices inside hear nothing, as on untrack)."
        )

        @Argument(help: "The geofence ids.") var ids: [String]
        @OptionGroup var catalog: Catalog

        func validate() throws {
            guard !ids.isEmpty, ids.allSatisfy({ !$0.isEmpty }) else { throw ValidationError("Name the geofences.") }
        }

        func run() async throws {
            try await catalog.send(ids.map { ($0, nil) }, tool: "geoworker geofences delete")
            print("deleted \(ids.count) geofence\(ids.count == 1 ? "" : "s")")
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Put every feature of a GeoJSON FeatureCollection (as geojson.io and QGIS export) in the catalog.",
            discussion: """
                Each Feature is a geofence: its id from the feature's `id` (else `properties.id`), a Polygon or \
                MultiPolygon, or a Point with `properties.radius` in metres; from its properties `tags` (a list, or \
                comma-separated), `title` (else `name`), `dwellSeconds`, `approachSeconds`, and the rest as its \
                metadata. Nothing is sent unless every feature is one the worker takes.
                """
        )

        @Argument(help: "The GeoJSON file ('-' for standard input).") var file: String
        @Option(help: "Tags to add to every feature, comma-separated or repeated.") var tags: [String] = []
        @OptionGroup var catalog: Catalog

        func run() async throws {
            let data =
                file == "-"
                ? FileHandle.standardInput.readDataToEndOfFile()
                : try Data(contentsOf: URL(fileURLWithPath: file))
            let extraTags = tags.flatMap { $0.split(separator: ",").map(String.init) }
            let features: [Result<(id: String, json: Data), GeoJSONFeatures.Problem>]
            do {
                features = try GeoJSONFeatures.records(in: data, extraTags: extraTags)
            } catch let problem as GeoJSONFeatures.Problem {
                throw CommandFailure("geoworker geofences import: \(file): nothing sent: \(problem.reason)")
            }
            var records: [(id: String, json: [UInt8]?)] = []
            var refused: [String] = []
            for (index, feature) in features.enumerated() {
                switch feature {
                case .failure(let problem): refused.append("\(problem)")
                case .success(let feature):
                    switch GeofencesCommand.checked(feature.json, id: feature.id) {
                    case .success(let bytes): records.append((feature.id, bytes))
                    case .failure(let failure):
                        refused.append("feature \(index) ('\(feature.id)'): \(failure.description)")
                    }
                }
            }
            let ids = Dictionary(grouping: records.map(\.id), by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            if !ids.isEmpty {
                refused.append("ids given to more than one feature: \(ids.prefix(5).joined(separator: ", "))")
            }
            guard refused.isEmpty else {
                throw CommandFailure(
                    "geoworker geofences import: \(file): nothing sent; \(refused.count) problem(s):\n  "
                        + refused.prefix(20).joined(separator: "\n  ")
                )
            }
            try await catalog.send(records, tool: "geoworker geofences import")
            print("imported \(records.count) geofence\(records.count == 1 ? "" : "s")")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the catalog's geofences as they stand now (read from the topic, as the worker reads it)."
        )

        @Option(help: "Only geofences with this tag.") var tag: String?
        @Flag(help: "One JSON record per geofence, as the topic holds it.") var json = false
        @OptionGroup var catalog: Catalog

        func run() async throws {
            let tool = "geoworker geofences list"
            let settings = try await catalog.settings(tool: tool)
            let topic = settings.topics.geofences
            let latest = try await CatalogReading.latest(topic: topic, settings: settings, tool: tool)
            for (id, value) in latest.sorted(by: { $0.key < $1.key }) {
                let decoded = value.withUnsafeBytes { CatalogGeofence.decode(json: $0, key: id) }
                guard case .success(let geofence) = decoded else { continue }
                if let tag, !geofence.tags.contains(tag) { continue }
                if json {
                    print(String(decoding: value, as: UTF8.self))
                } else {
                    let area =
                        switch geofence.geofence.shape {
                        case .circle(let center, let radius): "\(center.latitude),\(center.longitude)  r=\(radius) m"
                        case .polygon(let polygon):
                            "polygon of \(polygon.vertexCount) vertices in [\(polygon.bounds.west),"
                                + "\(polygon.bounds.south),\(polygon.bounds.east),\(polygon.bounds.north)]"
                        }
                    print(
                        "\(id)  \(area)  [\(geofence.tags.joined(separator: ","))]"
                            + (geofence.geofence.title.map { "  \($0)" } ?? "")
                    )
                }
            }
        }
    }
}

/// Reads a catalog topic to its end, as `geoworker geofences list` shows it.
enum CatalogReading {
    /// The newest value of each geofence id; deleted ones left out.
    static func latest(topic: String, settings: ToolConfiguration, tool: String) async throws -> [String: [UInt8]] {
        let reader = try Consumer(
            configuration: settings.consumerConfiguration(groupId: "geoworker-geofences-list"),
            subscription: .partitions([:])
        )
        let partitions: [TopicPartition]
        let ends: [TopicPartition: Int64]
        do {
            let count = try await reader.partitionCount(topic: topic)
            partitions = (0..<Int32(count)).map { TopicPartition(topic, $0) }
            ends = try await reader.offsets(.end, of: partitions)
            await reader.close()
        } catch {
            await reader.close()
            throw CommandFailure("\(tool): the catalog topic \(topic) cannot be read at \(settings.brokers) (\(error))")
        }
        let consumer = try Consumer(
            configuration: settings.consumerConfiguration(groupId: "geoworker-geofences-list"),
            subscription: .partitions(Dictionary(uniqueKeysWithValues: partitions.map { ($0, .beginning) }))
        )
        do {
            let latest = try await read(consumer, topic: topic, from: partitions, to: ends)
            await consumer.close()
            return latest
        } catch {
            await consumer.close()
            throw error
        }
    }

    private static func read(
        _ consumer: Consumer,
        topic: String,
        from partitions: [TopicPartition],
        to ends: [TopicPartition: Int64]
    ) async throws -> [String: [UInt8]] {
        var next = Dictionary(uniqueKeysWithValues: partitions.map { ($0, Int64(0)) })
        var latest: [String: [UInt8]] = [:]
        while next.contains(where: { $0.value < ends[$0.key] ?? 0 }) {
            let batch = try await consumer.nextBatch(maxMessages: 10_000, timeout: .milliseconds(200))
            for record in batch {
                next[TopicPartition(topic, record.partition)] = record.offset + 1
                guard let key = record.key.map({ String(decoding: $0, as: UTF8.self) }) else { continue }
                latest[key] = record.value
            }
            for ended in batch.partitionsReachedEnd where ended.topic == topic {
                next[ended] = max(next[ended] ?? 0, ends[ended] ?? 0)
            }
        }
        return latest
    }
}
