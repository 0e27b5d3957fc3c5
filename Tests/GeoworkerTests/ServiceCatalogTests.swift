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

    /// A catalog change produced while the worker runs, and positions stamped after it produced right behind it: the
    /// running worker decides them against the change, as a fresh replay of the same topics does, though its catalog
    /// consumer reads the change after its group consumer has the positions (the catalog's partitions on a broker taken
    /// down for 2 s once the change is in: the catalog's fetch in flight then answers without it, and the next fails).
    @Test("a change produced mid-stream applies to the positions stamped after it, read late or not, as in a replay")
    func changeMidStream() async throws {
        let cluster = try MockCluster(brokers: 2, logger: ServiceTestBed.logger)
        let bed = try ServiceTestBed(on: .mock(cluster))
        let catalog = "geofences-\(UUID().uuidString.prefix(8))"
        try bed.broker.createTopic(catalog, partitions: 2)
        let topics = bed.topics
        for partition in 0..<Int32(bed.partitions) {
            for topic in [
                topics.positions, topics.commands, topics.events, DeviceChangelog.defaultTopic(groupId: bed.group),
            ] {
                try cluster.setLeader(of: topic, partition: partition, to: 1)
            }
        }
        try cluster.setLeader(of: topics.deadLetters, partition: 0, to: 1)
        for partition: Int32 in 0..<2 { try cluster.setLeader(of: catalog, partition: partition, to: 2) }
        try cluster.setCoordinator(ofGroup: bed.group, to: 1)

        let trucks = (0..<60).map { "truck-\($0)" }
        // Each truck is north of the depot; the depot moves to where they all are at 300 s.
        func lat(_ truck: Int) -> Double { 48.50 + Double(truck % 10) * 0.0001 }
        try await bed.produce(
            [
                Self.geofence(
                    catalog,
                    "depot",
                    #"{"id":"depot","lat":48.40,"lon":7.75,"radius":400,"tags":["depots"]}"#,
                    at: -600
                )
            ]
                + trucks.map {
                    Self.message(
                        topics.commands,
                        $0,
                        #"{"type":"subscribe","deviceId":"\#($0)","tags":["depots"]}"#,
                        at: -60
                    )
                }
                + trucks.enumerated().map { Self.position(topics.positions, $1, lat: lat($0), lon: 7.75, at: 0) }
        )
        let running = try bed.start(["--catalog", "--geofences-topic", catalog, "--http-devices"])
        defer { running.send(SIGKILL) }
        let port = try await listeningPort(of: running)
        try await waitUntilConsumed(port, positions: trucks.count)
        // The move, stamped 290 s (delivered before the trucks' fixes are produced), then their fixes of 300 s.
        try await bed.produce([
            Self.geofence(
                catalog,
                "depot",
                #"{"id":"depot","lat":48.5005,"lon":7.75,"radius":400,"tags":["depots"]}"#,
                at: 290
            )
        ])
        try cluster.takeBrokerDown(2)
        // Through the first broker only, which leads the input topics: no request waits for the slow one.
        let firstBroker = String(bed.bootstrapServers.split(separator: ",")[0])
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: firstBroker),
            logger: ServiceTestBed.logger
        )
        let reports = await producer.send(
            trucks.enumerated().map { Self.position(topics.positions, $1, lat: lat($0), lon: 7.75, at: 300) }
        ).reports()
        await producer.close()
        #expect(reports.allSatisfy { $0.isDelivered })
        try await Task.sleep(for: .seconds(2))
        try cluster.bringBrokerUp(2)
        try await waitUntilConsumed(port, positions: 2 * trucks.count)
        // The card: the subscription, and the moved depot the truck is inside, as the catalog has it now.
        let card = try await get(port, "devices/truck-0")
        #expect(
            card.body.contains(#""catalog":{"subscriptions":["depots"],"geofences":[{"pin":{"id":"depot","#),
            "\(card.body)"
        )
        #expect(card.body.contains(#""lat":48.5005"#) && card.body.contains(#""state":"inside""#), "\(card.body)")
        // The catalog in view: the moved depot, as this instance has it; a bad box and another tag.
        let inView = try await get(port, "geofences?bbox=7.7,48.45,7.8,48.55")
        #expect(inView.status == 200 && inView.body.contains(#""lat":48.5005"#), "\(inView.body)")
        #expect(inView.body.contains(#""shown":1,"inView":1"#), "\(inView.body)")
        #expect(try await get(port, "geofences?bbox=7.7,48.45,7.8,48.55&tag=ports").body.contains(#""inView":0"#))
        #expect(try await get(port, "geofences?bbox=7.7,48.45").status == 400)
        let validation = try await ServiceTestBed.validate(["device-status\t" + card.body, "geofences\t" + inView.body])
        #expect(validation.status == 0, "\(validation.output)")
        await ServiceScaleOutTests.stop(running)
        let live = try await bed.events()

        let replay = try bed.instance(named: "replay")
        defer { try? FileManager.default.removeItem(atPath: replay.stateDir) }
        try await bed.runUntilCaughtUp(["--catalog", "--geofences-topic", catalog], as: replay)
        let replayed = try await bed.readAll(replay.events, partitions: bed.partitions).map(ServiceTestBed.Event.init)
        #expect(replayed.filter { $0.type == "geofence.entered" }.count == trucks.count, "each truck enters the depot")
        ServiceScaleOutTests.expectSameEvents(live, as: replayed, logs: String(running.errors.suffix(3000)))
    }

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
                    .replacingOccurrences(of: "\(Self.start + seconds * 1000)", with: "\(now + seconds * 1000)")
                record.value = Array(text.utf8)
            }
            return record
        }
        try await bed.produce([
            at(
                Self.message(
                    topics.commands,
                    "van-1",
                    #"{"type":"subscribe","deviceId":"van-1","tags":["depots"]}"#,
                    at: 1
                ),
                1
            ),
            at(Self.position(topics.positions, "van-1", lat: 48.570, lon: 7.750, at: 60), 60),
            at(Self.position(topics.positions, "van-1", lat: 48.579, lon: 7.750, at: 120), 120),
            at(Self.position(topics.positions, "van-1", lat: 48.579, lon: 7.7501, at: 300), 300),
            at(Self.position(topics.positions, "van-1", lat: 48.590, lon: 7.750, at: 360), 360),
        ])
        _ = try await Self.run(bed, catalog: catalog)
        let events = try await bed.events().filter { $0.type.hasPrefix("geofence.") }
        #expect(
            events.map(\.type) == ["geofence.entered", "geofence.dwelled", "geofence.exited"],
            "\(events.map(\.json))"
        )
    }

    /// The border traffic's devices watching two shared geofences through the catalog instead of pins of their own.
    static func catalogTraffic(_ bed: ServiceTestBed, _ traffic: BorderTraffic, catalog: String) -> [ProducerRecord] {
        [
            geofence(
                catalog,
                "depot",
                #"{"id":"depot","lat":48.574,"lon":7.70,"radius":1800,"title":"Strasbourg depot","tags":["depots"]}"#,
                at: -600_000
            ),
            geofence(
                catalog,
                "customer",
                #"{"id":"customer","lat":48.574,"lon":7.88,"radius":1500,"dwellSeconds":60,"tags":["customers"]}"#,
                at: -600_000
            ),
        ]
            + (0..<traffic.devices).map { device in
                let id = traffic.deviceId(device)
                return ProducerRecord(
                    topic: bed.topics.commands,
                    key: Array(id.utf8),
                    value: Array(#"{"type":"subscribe","deviceId":"\#(id)","tags":["customers","depots"]}"#.utf8),
                    timestampMilliseconds: BorderTraffic.start - 1000
                )
            }
    }

    @Test("one of two instances killed mid-stream: the survivor takes its devices' catalog visits; a replay's events")
    func failover() async throws {
        let bed = try ServiceTestBed()
        let catalog = "geofences-\(UUID().uuidString.prefix(8))"
        try bed.broker.createTopic(catalog, partitions: 2)
        let withCatalog = ["--catalog", "--geofences-topic", catalog]
        let traffic = BorderTraffic(devices: 200, positionsPerDevice: 120, topics: bed.topics)
        let thirds = ServiceScaleOutTests.thirds(traffic.positions())
        try await bed.produce(Self.catalogTraffic(bed, traffic, catalog: catalog) + thirds[0])

        let doomed = try bed.start(withCatalog, as: ServiceScaleOutTests.member(bed, "a"))
        let survivor = try bed.start(withCatalog, as: ServiceScaleOutTests.member(bed, "b"))
        defer { survivor.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(doomed, "assigned 4 partitions")
        try await ServiceScaleOutTests.waitForLog(survivor, "assigned 4 partitions")
        try await ServiceScaleOutTests.waitForChangelog(bed)
        let before = try await ServiceScaleOutTests.changelogCounts(bed)
        try await bed.produce(thirds[1])
        try await ServiceScaleOutTests.waitForChangelog(bed, beyond: before)
        doomed.send(SIGKILL)
        #expect(await doomed.waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        try await bed.produce(thirds[2])

        let reference = try await bed.referenceEvents(named: "reference", withCatalog)
        #expect(
            reference.filter { $0.type == "geofence.dwelled" }.count == traffic.devices,
            "each dwells at the customer"
        )
        let events = try await ServiceScaleOutTests.waitForAll(bed, reference)
        await ServiceScaleOutTests.stop(survivor)
        ServiceScaleOutTests.expectSameEvents(events, as: reference, logs: String(survivor.errors.suffix(4000)))
        #expect(ServiceScaleOutTests.restoredRecords(in: survivor.errors) > 0, "\(survivor.errors.suffix(2000))")
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
