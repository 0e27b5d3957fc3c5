import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// The fleet's geofence catalog through the whole service: catalog records, `subscribe` commands and positions produced
/// to the mock cluster or noida-db, `geoworker run --catalog` as an operator runs it, the events read back.
@Suite("The fleet's geofence catalog end to end (mock cluster and noida-db, real pipeline)", .timeLimit(.minutes(10)))
struct ServiceCatalogTests {
    static let start: Int64 = 1_795_500_000_000

    /// A bed on `kind` with a catalog topic of `partitions` partitions (compacted where the broker takes settings).
    static func bed(
        on kind: TestBroker.Kind = .mock,
        catalogPartitions partitions: Int = 3
    ) async throws -> (ServiceTestBed, String) {
        let bed = try await ServiceRealBrokerTests.bed(on: kind)
        let topic = "geofences-\(UUID().uuidString.prefix(8))"
        try bed.broker.createTopic(
            topic,
            partitions: partitions,
            configuration: kind == .noida ? ["cleanup.policy": "compact"] : [:]
        )
        return (bed, topic)
    }

    static func geofence(_ topic: String, _ id: String, _ json: String?, at seconds: Int64) -> ProducerRecord {
        ProducerRecord(
            topic: topic,
            key: Array(id.utf8),
            value: json.map { Array($0.utf8) },
            timestampMilliseconds: start + seconds * 1000
        )
    }

    static func message(_ topic: String, _ device: String, _ json: String, at seconds: Int64) -> ProducerRecord {
        ProducerRecord(
            topic: topic,
            key: Array(device.utf8),
            value: Array(json.utf8),
            timestampMilliseconds: start + seconds * 1000
        )
    }

    static func position(
        _ topic: String,
        _ device: String,
        lat: Double,
        lon: Double,
        at seconds: Int64
    )
        -> ProducerRecord
    {
        message(
            topic,
            device,
            #"{"deviceId":"\#(device)","lat":\#(lat),"lon":\#(lon),"timestamp":\#(start + seconds * 1000),"accuracy":10}"#,
            at: seconds
        )
    }

    /// Runs `geoworker run --catalog` until caught up; returns its log.
    static func run(_ bed: ServiceTestBed, catalog topic: String, _ extra: [String] = []) async throws -> String {
        let child = try bed.start(["--until-caught-up", "--catalog", "--geofences-topic", topic] + extra)
        let ending = await child.waitForExit(timeout: .seconds(120))
        #expect(ending == .exited(0), "geoworker run: \(child.errors.suffix(3000))")
        return child.errors
    }

    @Test(
        "subscribed by tag: entered and exited as the catalog says, a moved and an added geofence decided at the next fix, a bad record dead-lettered; across a restart",
        arguments: TestBroker.Kind.allCases
    )
    func subscribed(on kind: TestBroker.Kind) async throws {
        let (bed, catalog) = try await Self.bed(on: kind)
        let topics = bed.topics
        try await bed.produce([
            Self.geofence(
                catalog,
                "depot-1",
                #"{"id":"depot-1","lat":48.578,"lon":7.750,"radius":300,"title":"Depot 1","tags":["depots"]}"#,
                at: -600
            ),
            Self.geofence(
                catalog,
                "airport-1",
                #"{"id":"airport-1","lat":48.540,"lon":7.628,"radius":1500,"tags":["airports"]}"#,
                at: -600
            ),
            Self.geofence(catalog, "broken", #"{"id":"broken","lat":48.5,"lon":7.7,"radius":100}"#, at: -600),
            Self.message(
                topics.commands,
                "truck-1",
                #"{"type":"subscribe","deviceId":"truck-1","tags":["depots"]}"#,
                at: -60
            ),
            // Subscribed to nothing: the catalog's geofences are not its.
            Self.position(topics.positions, "car-2", lat: 48.578, lon: 7.750, at: 0),
            Self.position(topics.positions, "truck-1", lat: 48.560, lon: 7.750, at: 0),
            Self.position(topics.positions, "truck-1", lat: 48.578, lon: 7.750, at: 60),
        ])
        let firstLog = try await Self.run(bed, catalog: catalog)
        #expect(firstLog.contains("a catalog record that cannot be used is skipped"), "\(firstLog.suffix(3000))")
        #expect(firstLog.contains("must hold 1 to 32 tags") || firstLog.contains("tags"), "\(firstLog.suffix(3000))")

        // Meanwhile the depot moves away from the truck, and another is added where the truck is.
        try await bed.produce([
            Self.geofence(
                catalog,
                "depot-1",
                #"{"id":"depot-1","lat":48.600,"lon":7.750,"radius":300,"title":"Depot 1","tags":["depots"]}"#,
                at: 100
            ),
            Self.geofence(
                catalog,
                "depot-2",
                #"{"id":"depot-2","lat":48.5785,"lon":7.7505,"radius":200,"tags":["depots","north"]}"#,
                at: 100
            ),
            Self.position(topics.positions, "truck-1", lat: 48.578, lon: 7.750, at: 120),
            Self.position(topics.positions, "truck-1", lat: 48.578, lon: 7.7501, at: 180),
        ])
        _ = try await Self.run(bed, catalog: catalog)

        let events = try await bed.events().filter { $0.type.hasPrefix("geofence.") }
        #expect(events.allSatisfy { $0.subject == "truck-1" }, "\(events.map(\.json))")
        let summary = try events.map { event -> String in
            let data = try ServiceGeofenceTests.data(of: event)
            let pin = try #require(data["pin"] as? [String: Any])
            #expect(pin["source"] as? String == "catalog", "\(event.json)")
            return "\(event.type) \(pin["id"] as? String ?? "?") \(data["initial"] as? Bool == true ? "initial" : "")"
                + " \((pin["tags"] as? [String])?.joined(separator: ",") ?? "")"
        }
        // The moved geofence's exit and the added one's initial entry come from one fix, in the order of their ids.
        #expect(
            summary == [
                "geofence.entered depot-1  depots", "geofence.exited depot-1  depots",
                "geofence.entered depot-2 initial depots,north",
            ]
        )
        let lines = try await bed.events().map { "event\t" + $0.json }
        let valid = try await ServiceTestBed.validate(lines)
        #expect(valid.status == 0, "\(valid.output)")
        // The record without tags, on the dead-letter topic as it came, once per start of the worker that read it.
        let letters = try await bed.readAll(topics.deadLetters, partitions: bed.deadLetterPartitions)
        #expect(letters.count == 2, "\(letters.map(\.headers))")
        for letter in letters {
            #expect(letter.headers["geoworker-reason"] == "missing-field", "\(letter.headers)")
            #expect(letter.headers["geoworker-error"]?.contains("tags") == true, "\(letter.headers)")
            #expect(letter.headers["geoworker-origin"]?.hasPrefix("\(catalog):") == true, "\(letter.headers)")
            #expect(letter.key == "broken")
        }
    }

    @Test(
        "tags every device has (tracker.catalogTags) need no command, and no unsubscribe removes them; a subscribed tag's does"
    )
    func defaultTags() async throws {
        let (bed, catalog) = try await Self.bed(catalogPartitions: 1)
        let topics = bed.topics
        let inside = (lat: 48.578, lon: 7.750)
        try await bed.produce([
            Self.geofence(
                catalog,
                "yard",
                #"{"id":"yard","lat":48.578,"lon":7.750,"radius":300,"tags":["yards"]}"#,
                at: -600
            ),
            Self.geofence(
                catalog,
                "dock",
                #"{"id":"dock","lat":48.578,"lon":7.750,"radius":200,"tags":["docks"]}"#,
                at: -600
            ),
            Self.message(
                topics.commands,
                "van-2",
                #"{"type":"subscribe","deviceId":"van-2","tags":["docks"]}"#,
                at: -60
            ),
            Self.position(topics.positions, "van-1", lat: 48.560, lon: inside.lon, at: 0),
            Self.position(topics.positions, "van-1", lat: inside.lat, lon: inside.lon, at: 60),
            Self.position(topics.positions, "van-2", lat: inside.lat, lon: inside.lon, at: 0),
            Self.message(
                topics.commands,
                "van-2",
                #"{"type":"unsubscribe","deviceId":"van-2","tags":["docks","yards"]}"#,
                at: 30
            ),
            Self.position(topics.positions, "van-2", lat: 48.560, lon: inside.lon, at: 60),
        ])
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("catalog-\(UUID()).json")
        try #"{"tracker":{"catalogTags":["yards"]}}"#.write(to: config, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: config) }
        _ = try await Self.run(bed, catalog: catalog, ["--config", config.path])
        let events = try await bed.events().filter { $0.type.hasPrefix("geofence.") }
        func of(_ device: String) throws -> [String] {
            try events.filter { $0.subject == device }.map { event in
                let data = try ServiceGeofenceTests.data(of: event)
                let pin = (data["pin"] as? [String: Any])?["id"] as? String ?? "?"
                return "\(event.type) \(pin)\(data["initial"] as? Bool == true ? " initial" : "")"
            }
        }
        #expect(try of("van-1") == ["geofence.entered yard"])
        // The dock's visit ends with its unsubscribe, silently; the yard's tag is every device's.
        #expect(
            try of("van-2") == [
                "geofence.entered dock initial", "geofence.entered yard initial", "geofence.exited yard",
            ]
        )
    }

    @Test(
        "a moved geofence's old version is kept for late positions, and dropped once positions are past the retention"
    )
    func versionRetention() async throws {
        let (bed, catalog) = try await Self.bed(catalogPartitions: 1)
        let topics = bed.topics
        func depot(at lat: Double, _ seconds: Int64) -> ProducerRecord {
            Self.geofence(
                catalog,
                "depot",
                #"{"id":"depot","lat":\#(lat),"lon":7.75,"radius":300,"tags":["depots"]}"#,
                at: seconds
            )
        }
        try await bed.produce([
            depot(at: 48.40, -600), Self.position(topics.positions, "van-1", lat: 48.5, lon: 7.7, at: 0),
        ])
        let keeping = try bed.start(["--catalog", "--geofences-topic", catalog])
        defer { keeping.send(SIGKILL) }
        let dropping = try bed.start(
            ["--catalog", "--geofences-topic", catalog],
            as: try bed.instance(named: "dropping"),
            environment: ["GEOWORKER_CATALOG_VERSION_RETENTION_SECONDS": "60"]
        )
        defer { dropping.send(SIGKILL) }
        let (keepingPort, droppingPort) = (try await listeningPort(of: keeping), try await listeningPort(of: dropping))
        try await waitUntilConsumed(keepingPort, positions: 1)
        try await waitUntilConsumed(droppingPort, positions: 1)
        try await bed.produce([
            depot(at: 48.41, 100), Self.position(topics.positions, "van-1", lat: 48.5, lon: 7.7, at: 300),
        ])
        try await waitUntilConsumed(keepingPort, positions: 2)
        try await waitUntilConsumed(droppingPort, positions: 2)
        // The version of before 100 s ended 200 s before the newest position: past a 60 s retention, within an hour's.
        try await waitUntil("the old version dropped", timeout: .seconds(40)) {
            gauge("geoworker_catalog_versions", in: try await get(droppingPort, "metrics").body) == 1
        }
        let kept = gauge("geoworker_catalog_versions", in: try await get(keepingPort, "metrics").body)
        #expect(kept == 2)
        #expect(gauge("geoworker_catalog_geofences", in: try await get(droppingPort, "metrics").body) == 1)
    }

    @Test(
        "a catalog topic that does not exist stops the start naming topics.geofences, unless allowed",
        arguments: TestBroker.Kind.allCases
    )
    func missingTopic(on kind: TestBroker.Kind) async throws {
        let bed = try await ServiceRealBrokerTests.bed(on: kind)
        let child = try bed.start(["--until-caught-up", "--catalog", "--geofences-topic", "no-such-catalog"])
        let ending = await child.waitForExit(timeout: .seconds(60))
        #expect(ending != .exited(0))
        #expect(child.errors.contains("topics.geofences"), "\(child.errors.suffix(2000))")
        #expect(child.errors.contains("catalog.allowMissingTopic"), "\(child.errors.suffix(2000))")

        let allowed = try bed.start(
            ["--until-caught-up", "--catalog", "--geofences-topic", "no-such-catalog"],
            environment: ["GEOWORKER_CATALOG_ALLOW_MISSING_TOPIC": "true"]
        )
        #expect(await allowed.waitForExit(timeout: .seconds(60)) == .exited(0), "\(allowed.errors.suffix(2000))")
        #expect(allowed.errors.contains("the catalog is empty"), "\(allowed.errors.suffix(2000))")
    }
}
