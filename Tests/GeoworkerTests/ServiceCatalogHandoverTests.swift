import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// The catalog and the merge's hand-over rules through the whole service (mock cluster): a change read late by the
/// catalog's consumer, and a failover whose survivor takes its devices' catalog visits.
@Suite("The fleet's geofence catalog: late reads and failover (mock cluster, real pipeline)", .timeLimit(.minutes(10)))
struct ServiceCatalogHandoverTests {
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
                ServiceCatalogTests.geofence(
                    catalog,
                    "depot",
                    #"{"id":"depot","lat":48.40,"lon":7.75,"radius":400,"tags":["depots"]}"#,
                    at: -600
                )
            ]
                + trucks.map {
                    ServiceCatalogTests.message(
                        topics.commands,
                        $0,
                        #"{"type":"subscribe","deviceId":"\#($0)","tags":["depots"]}"#,
                        at: -60
                    )
                }
                + trucks.enumerated().map {
                    ServiceCatalogTests.position(topics.positions, $1, lat: lat($0), lon: 7.75, at: 0)
                }
        )
        let running = try bed.start(["--catalog", "--geofences-topic", catalog, "--http-devices"])
        defer { running.send(SIGKILL) }
        let port = try await listeningPort(of: running)
        try await waitUntilConsumed(port, positions: trucks.count)
        // The move, stamped 290 s (delivered before the trucks' fixes are produced), then their fixes of 300 s.
        try await bed.produce([
            ServiceCatalogTests.geofence(
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
            trucks.enumerated().map {
                ServiceCatalogTests.position(topics.positions, $1, lat: lat($0), lon: 7.75, at: 300)
            }
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

    /// The border traffic's devices watching two shared geofences through the catalog instead of pins of their own.
    static func catalogTraffic(_ bed: ServiceTestBed, _ traffic: BorderTraffic, catalog: String) -> [ProducerRecord] {
        [
            ServiceCatalogTests.geofence(
                catalog,
                "depot",
                #"{"id":"depot","lat":48.574,"lon":7.70,"radius":1800,"title":"Strasbourg depot","tags":["depots"]}"#,
                at: -600_000
            ),
            ServiceCatalogTests.geofence(
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

}
