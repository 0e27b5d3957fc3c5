import Foundation
import GeoCore
import Testing

/// The fleet's catalog through the tracker: `subscribe` and `unsubscribe`, the tags every device has, events that name
/// the catalog's geofence, and the state that carries a device's visits across a restart.
@Suite("DeviceTracker: catalog geofences", .timeLimit(.minutes(5)))
struct CatalogTrackerTests {
    static let depot = CatalogGeofence(
        geofence: Pin(id: "depot-9", center: DeviceScenario.pinCenter, radius: 200, title: "Depot 9")!,
        tags: ["depots", "north"]
    )!
    static let airport = CatalogGeofence(
        geofence: Pin(id: "airport-1", center: DeviceScenario.pinCenter.offset(north: 0, east: 3_000), radius: 500)!,
        tags: ["airports"]
    )!

    /// A catalog holding the depot and the airport since before every message.
    static func catalog() -> FleetCatalog {
        let catalog = FleetCatalog()
        catalog.geofences.put(depot, at: DeviceScenario.start - 60_000)
        catalog.geofences.put(airport, at: DeviceScenario.start - 60_000)
        return catalog
    }

    func subscribe(_ tags: [String], _ device: inout DeviceScenario) -> [DeviceEvent] {
        device.command(.subscribe(deviceId: device.state.deviceId, tags: tags))
    }

    @Test(
        "a subscribe where the device is inside gives the initial entry, named as the catalog's geofence with its tags"
    )
    func subscribeInside() throws {
        var device = DeviceScenario(catalog: Self.catalog())
        #expect(device.move(north: 20, at: 1).isEmpty, "no subscription: the catalog is not looked at")
        let events = subscribe(["depots"], &device)
        #expect(events.map(\.summary) == ["entered depot-9 initial"])
        let event = try #require(events.first)
        #expect(event.catalogTags == ["depots", "north"])
        let json = String(decoding: CloudEventEncoder().encode(event), as: UTF8.self)
        #expect(json.contains(#""source":"catalog","tags":["depots","north"]"#), "\(json)")
        #expect(json.contains(#""title":"Depot 9""#), "\(json)")
        #expect(device.move(north: 30, at: 2).isEmpty)
        let exit = device.move(north: 1_000, at: 3)
        #expect(exit.map(\.summary) == ["exited depot-9"])
        #expect(exit.first?.catalogTags == ["depots", "north"])
        #expect(device.state.catalog?.visits.isEmpty == true, "outside it, the device keeps nothing of the geofence")
    }

    @Test("a tracked pin's events say nothing of a catalog, beside catalog events for the same fix")
    func pinsBeside() throws {
        var device = DeviceScenario(catalog: Self.catalog())
        _ = device.track(DeviceScenario.pin)
        _ = subscribe(["depots"], &device)
        let events = device.move(north: 20, at: 1)
        #expect(events.map(\.summary).sorted() == ["entered depot-9 initial", "entered exit-23 initial"])
        let pinEvent = try #require(events.first { $0.catalogTags == nil })
        let json = String(decoding: CloudEventEncoder().encode(pinEvent), as: UTF8.self)
        #expect(!json.contains(#""source":"catalog""#) && !json.contains("tags"), "\(json)")
    }

    @Test("tags every device has (tracker.catalogTags) need no command; other tags' geofences are not decided")
    func defaultTags() {
        var configuration = TrackerConfiguration()
        configuration.catalogTags = ["airports"]
        var device = DeviceScenario(configuration: configuration, catalog: Self.catalog())
        #expect(device.move(north: 20, at: 1).isEmpty, "the depot's tags are not the device's")
        #expect(device.move(east: 3_000, at: 2).map(\.summary) == ["entered airport-1"])
        #expect(device.state.catalog?.subscriptions == [])
    }

    @Test("unsubscribe announces nothing, not even at the next fix outside; nothing of the catalog is left")
    func unsubscribe() throws {
        var device = DeviceScenario(catalog: Self.catalog())
        _ = device.move(north: 20, at: 1)
        _ = subscribe(["depots"], &device)
        #expect(device.command(.unsubscribe(deviceId: "truck-17", tags: ["depots"])).isEmpty)
        #expect(device.move(north: 1_000, at: 2).isEmpty)
        #expect(device.state.catalog == nil)
        #expect(DeviceStateEncoding.encode(device.state)[0] == DeviceStateEncoding.versionWithoutCatalog)
        // Another tag still reaching the geofence keeps its visit.
        var both = DeviceScenario(catalog: Self.catalog())
        _ = both.move(north: 20, at: 1)
        _ = subscribe(["depots", "north"], &both)
        _ = both.command(.unsubscribe(deviceId: "truck-17", tags: ["depots"]))
        #expect(both.move(north: 1_000, at: 2).map(\.summary) == ["exited depot-9"])
    }

    @Test(
        "subscribing again to a tag it has changes nothing; a second tag reaching the same geofence announces nothing"
    )
    func subscribeAgain() {
        var device = DeviceScenario(catalog: Self.catalog())
        _ = device.move(north: 20, at: 1)
        #expect(subscribe(["depots"], &device).count == 1)
        #expect(subscribe(["depots"], &device).isEmpty)
        #expect(subscribe(["north"], &device).isEmpty)
        #expect(device.move(north: 30, at: 2).isEmpty)
    }

    @Test("without a fix that can decide, the next one gives the initial state")
    func subscribeBeforeAnyFix() {
        var device = DeviceScenario(catalog: Self.catalog())
        #expect(subscribe(["depots"], &device).isEmpty)
        #expect(device.move(north: 20, at: 1).map(\.summary) == ["entered depot-9 initial"])

        var inaccurate = DeviceScenario(catalog: Self.catalog())
        _ = subscribe(["airports"], &inaccurate)
        _ = inaccurate.move(north: 20, at: 1)
        _ = inaccurate.move(north: 20, at: 2, accuracy: 900)
        #expect(subscribe(["depots"], &inaccurate).isEmpty, "the last fix is too inaccurate to decide")
        #expect(inaccurate.move(north: 20, at: 3).map(\.summary) == ["entered depot-9 initial"])
    }

    @Test("a restart mid-visit (the state encoded and decoded) announces nothing again, and the exit still comes")
    func restart() throws {
        var device = DeviceScenario(catalog: Self.catalog())
        _ = subscribe(["depots"], &device)
        #expect(device.move(north: 20, at: 1).map(\.summary) == ["entered depot-9 initial"])
        try device.restart()
        #expect(device.move(north: 25, at: 2).isEmpty)
        #expect(device.move(north: 1_000, at: 3).map(\.summary) == ["exited depot-9"])
    }

    @Test("at most tracker.maxCatalogVisits visits: a geofence met beyond them is not decided, and counted")
    func visitBound() {
        var configuration = TrackerConfiguration()
        configuration.maxCatalogVisits = 1
        let catalog = Self.catalog()
        let overlapping = CatalogGeofence(
            geofence: Pin(id: "depot-10", center: DeviceScenario.pinCenter, radius: 300)!,
            tags: ["depots"]
        )!
        catalog.geofences.put(overlapping, at: DeviceScenario.start - 60_000)
        var device = DeviceScenario(configuration: configuration, catalog: catalog)
        _ = subscribe(["depots"], &device)
        #expect(device.move(north: 20, at: 1).count == 1)
        #expect(device.outcomes.last?.catalogGeofencesNotDecided == 1)
    }

    @Test("the status card lists the subscriptions and the catalog geofences the device is inside, with their tags")
    func card() throws {
        var device = DeviceScenario(catalog: Self.catalog())
        _ = subscribe(["depots"], &device)
        _ = device.move(north: 20, at: 1)
        let card = DeviceStatusCard(state: device.state, confirmedByFix: true, tracker: device.tracker, now: 0)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(card.json())) as? [String: Any]
        )
        let catalog = try #require(json["catalog"] as? [String: Any], "\(json)")
        #expect(catalog["subscriptions"] as? [String] == ["depots"])
        let geofences = try #require(catalog["geofences"] as? [[String: Any]])
        #expect(geofences.count == 1)
        #expect((geofences.first?["pin"] as? [String: Any])?["title"] as? String == "Depot 9")
        #expect(geofences.first?["state"] as? String == "inside")
        #expect(geofences.first?["tags"] as? [String] == ["depots", "north"])
        #expect((json["pins"] as? [Any])?.isEmpty == true)

        let withoutCatalog = DeviceStatusCard(
            state: DeviceState(deviceId: "van-1"),
            confirmedByFix: false,
            tracker: device.tracker,
            now: 0
        )
        #expect(!String(decoding: withoutCatalog.json(), as: UTF8.self).contains("catalog"))
    }

    @Test("the catalog in a map view: by id, with a tag or not, a limit, across the antimeridian")
    func view() throws {
        var catalog = GeofenceCatalog()
        for (id, lon, tags) in [("b", 10.0, ["depots"]), ("a", 10.01, ["depots", "north"]), ("c", 179.999, ["ports"])] {
            catalog.put(
                CatalogGeofence(
                    geofence: Pin(id: id, center: Coordinate(latitude: 0, longitude: lon)!, radius: 100)!,
                    tags: tags
                )!,
                at: 0
            )
        }
        catalog.put(
            CatalogGeofence(
                geofence: Pin(id: "gone", center: Coordinate(latitude: 0, longitude: 10)!, radius: 100)!,
                tags: ["depots"]
            )!,
            at: 0
        )
        catalog.delete(id: "gone", at: 10)
        let near = MapView(west: 9, south: -1, east: 11, north: 1)
        #expect(CatalogView(catalog, view: near, tag: nil, limit: 10).geofences.map(\.id) == ["a", "b"])
        #expect(CatalogView(catalog, view: near, tag: "north", limit: 10).geofences.map(\.id) == ["a"])
        let limited = CatalogView(catalog, view: near, tag: nil, limit: 1)
        #expect(limited.geofences.map(\.id) == ["a"] && limited.inView == 2)
        let across = MapView(west: 179, south: -1, east: -179, north: 1)
        #expect(CatalogView(catalog, view: across, tag: nil, limit: 10).geofences.map(\.id) == ["c"])
        #expect(CatalogView(catalog, view: .world, tag: nil, limit: 10).inView == 3)
        #expect(
            CatalogView(catalog, view: MapView(west: -20, south: 30, east: 30, north: 60), tag: nil, limit: 10).inView
                == 0
        )
        let json = String(decoding: CatalogView(catalog, view: near, tag: "north", limit: 10).json(), as: UTF8.self)
        #expect(
            json.contains(#""id":"a""#) && json.contains(#""tags":["depots","north"]"#)
                && json.contains(#""inView":1"#),
            "\(json)"
        )
    }
}
