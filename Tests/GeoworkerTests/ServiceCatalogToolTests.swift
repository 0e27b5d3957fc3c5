import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// `geoworker geofences` against both brokers, then the worker on what it wrote.
@Suite("geoworker geofences (mock cluster and noida-db)", .timeLimit(.minutes(10)))
struct ServiceCatalogToolTests {
    /// `geoworker geofences` against a catalog topic: the arguments to reach it.
    static func tool(
        _ bed: ServiceTestBed,
        _ catalog: String,
        _ arguments: [String]
    ) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["geofences"] + arguments + ["--brokers", bed.bootstrapServers, "--geofences-topic", catalog]
        )
    }

    @Test(
        "geofences import of a FeatureCollection, list and delete; then subscribed devices' events, on both brokers",
        arguments: TestBroker.Kind.allCases
    )
    func importedFeatures(on kind: TestBroker.Kind) async throws {
        let bed = try await ServiceRealBrokerTests.bed(on: kind)
        let catalog = "geofences-\(UUID().uuidString.prefix(8))"
        try bed.broker.createTopic(
            catalog,
            partitions: 3,
            configuration: kind == .noida ? ["cleanup.policy": "compact"] : [:]
        )
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("depots-\(UUID()).geojson")
        defer { try? FileManager.default.removeItem(at: file) }
        // As geojson.io writes it: a polygon with a name and a site code, a circle as a point with a radius, a yard
        // with tags of its own.
        try #"""
        {"type":"FeatureCollection","features":[
         {"type":"Feature","id":"depot-north","properties":{"name":"North depot","site":"N-1","dwellSeconds":120},
          "geometry":{"type":"Polygon","coordinates":[[[7.745,48.576],[7.755,48.576],[7.755,48.582],[7.745,48.582],[7.745,48.576]]]}},
         {"type":"Feature","properties":{"id":"depot-south","radius":300},
          "geometry":{"type":"Point","coordinates":[7.75,48.50]}},
         {"type":"Feature","id":"yard-1","properties":{"tags":"yards"},
          "geometry":{"type":"Point","coordinates":[7.60,48.50]}}
        ]}
        """#.write(to: file, atomically: true, encoding: .utf8)
        let refused = try await Self.tool(bed, catalog, ["import", file.path, "--tags", "depots"])
        #expect(refused.status != 0, "the yard's point has no radius: \(refused.output)")
        #expect(
            refused.errors.contains("feature 2 ('yard-1')") && refused.errors.contains("properties.radius"),
            "\(refused.errors)"
        )
        #expect(refused.errors.contains("nothing sent"), "\(refused.errors)")
        let fixed = try String(contentsOf: file, encoding: .utf8)
            .replacingOccurrences(of: #""tags":"yards"}"#, with: #""tags":"yards","radius":50}"#)
        try fixed.write(to: file, atomically: true, encoding: .utf8)
        let imported = try await Self.tool(bed, catalog, ["import", file.path, "--tags", "depots"])
        #expect(imported.status == 0 && imported.output.contains("imported 3 geofences"), "\(imported.errors)")
        let deleted = try await Self.tool(bed, catalog, ["delete", "yard-1"])
        #expect(deleted.status == 0, "\(deleted.errors)")
        let listed = try await Self.tool(bed, catalog, ["list", "--json"])
        #expect(listed.status == 0, "\(listed.errors)")
        let lines = listed.output.split(separator: "\n")
        #expect(lines.count == 2, "\(listed.output)")
        #expect(lines.first?.contains(#""metadata":{"site":"N-1"}"#) == true, "\(listed.output)")
        #expect(lines.first?.contains(#""title":"North depot""#) == true, "\(listed.output)")
        let missing = try await Self.tool(bed, "no-such-catalog", ["delete", "depot-north"])
        #expect(missing.status != 0 && missing.errors.contains("no-such-catalog"), "\(missing.errors)")

        // The tool stamps its records now: the van drives after that.
        let topics = bed.topics
        let now = Int64(Date().timeIntervalSince1970) * 1000
        func at(_ record: ProducerRecord, _ seconds: Int64) -> ProducerRecord {
            var record = record
            record.timestampMilliseconds = now + seconds * 1000
            if let value = record.value {
                let text = String(decoding: value, as: UTF8.self)
                    .replacingOccurrences(
                        of: "\(ServiceCatalogTests.start + seconds * 1000)",
                        with: "\(now + seconds * 1000)"
                    )
                record.value = Array(text.utf8)
            }
            return record
        }
        try await bed.produce([
            at(
                ServiceCatalogTests.message(
                    topics.commands,
                    "van-1",
                    #"{"type":"subscribe","deviceId":"van-1","tags":["depots"]}"#,
                    at: 1
                ),
                1
            ),
            at(ServiceCatalogTests.position(topics.positions, "van-1", lat: 48.570, lon: 7.750, at: 60), 60),
            at(ServiceCatalogTests.position(topics.positions, "van-1", lat: 48.579, lon: 7.750, at: 120), 120),
            at(ServiceCatalogTests.position(topics.positions, "van-1", lat: 48.579, lon: 7.7501, at: 300), 300),
            at(ServiceCatalogTests.position(topics.positions, "van-1", lat: 48.590, lon: 7.750, at: 360), 360),
        ])
        _ = try await ServiceCatalogTests.run(bed, catalog: catalog)
        let events = try await bed.events().filter { $0.type.hasPrefix("geofence.") }
        #expect(
            events.map(\.type) == ["geofence.entered", "geofence.dwelled", "geofence.exited"],
            "\(events.map(\.json))"
        )
    }

}
