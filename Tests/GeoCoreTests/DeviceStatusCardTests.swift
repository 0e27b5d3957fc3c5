import Foundation
import GeoCore
import Testing

@Suite("Device status card and map selection", .timeLimit(.minutes(5)))
struct DeviceStatusCardTests {
    static let tracker = DeviceTracker(countries: RectangleCountries())

    static func position(_ id: String, latitude: Double, longitude: Double, at time: Int64) -> Position {
        Position(
            deviceId: id,
            coordinate: Coordinate(latitude: latitude, longitude: longitude)!,
            timestamp: time,
            accuracy: 5
        )
    }

    static func origin(_ offset: Int64) -> MessageOrigin {
        MessageOrigin(topic: "p", partition: 2, offset: offset, timestamp: 0)
    }

    /// Applies a fix at (0.5, `longitude`) to device "d".
    static func fix(_ registry: inout DeviceRegistry, longitude: Double, at time: Int64, offset: Int64) {
        var events: [DeviceEvent] = []
        _ = registry.apply(
            position("d", latitude: 0.5, longitude: longitude, at: time),
            origin: origin(offset),
            events: &events
        )
    }

    static func json(_ card: DeviceStatusCard?) throws -> [String: Any] {
        let bytes = try #require(card).json()
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("status: unknown without a fix, current after one applied here, cached when restored until a fix")
    func locationStatus() throws {
        var registry = DeviceRegistry(tracker: Self.tracker)
        var events: [DeviceEvent] = []
        let pin = Pin(id: "p", center: Coordinate(latitude: 0.5, longitude: 0.5)!, radius: 1000)!
        _ = registry.apply(
            DeviceCommand.track(deviceId: "d", pin: pin),
            origin: MessageOrigin(topic: "c", partition: 2, offset: 0, timestamp: 0),
            events: &events
        )
        var card = try Self.json(registry.statusCard(of: "d", now: 0))
        #expect((card["country"] as? [String: Any])?["status"] as? String == "unknown")
        #expect(card["lastFix"] is NSNull)
        #expect((card["pins"] as? [[String: Any]])?.first?["state"] as? String == "undetermined")

        Self.fix(&registry, longitude: 0.5, at: 1_000, offset: 0)
        card = try Self.json(registry.statusCard(of: "d", now: 0))
        #expect((card["country"] as? [String: Any])?["status"] as? String == "current")
        #expect((card["country"] as? [String: Any])?["code"] as? String == "AA")
        #expect(card["partition"] as? Int == 2)
        #expect((card["pins"] as? [[String: Any]])?.first?["state"] as? String == "inside")

        var restored = DeviceRegistry(tracker: Self.tracker, states: [try #require(registry.state(of: "d"))])
        card = try Self.json(restored.statusCard(of: "d", now: 0))
        #expect((card["country"] as? [String: Any])?["status"] as? String == "cached")
        // A replayed (already applied) or older position confirms nothing.
        Self.fix(&restored, longitude: 0.5, at: 1_000, offset: 0)
        Self.fix(&restored, longitude: 0.5, at: 500, offset: 1)
        card = try Self.json(restored.statusCard(of: "d", now: 0))
        #expect((card["country"] as? [String: Any])?["status"] as? String == "cached")
        Self.fix(&restored, longitude: 1.5, at: 2_000, offset: 2)
        card = try Self.json(restored.statusCard(of: "d", now: 0))
        #expect((card["country"] as? [String: Any])?["status"] as? String == "current")
        #expect(restored.statusCard(of: "other", now: 0) == nil)
    }

    @Test("a trip under way, a speeding episode and the device's limits are on its card; none of it without them")
    func activity() throws {
        var configuration = TrackerConfiguration(trips: TripRules(), speeding: SpeedRules(limitMetersPerSecond: 30))
        configuration.speeding.minimumDurationSeconds = 0
        var registry = DeviceRegistry(
            tracker: DeviceTracker(configuration: configuration, countries: RectangleCountries())
        )
        var events: [DeviceEvent] = []
        _ = registry.apply(
            DeviceCommand.setLimits(deviceId: "d", speedLimit: 20, silentAfterSeconds: 900),
            origin: MessageOrigin(topic: "c", partition: 2, offset: 0, timestamp: 0),
            events: &events
        )
        // About 40 m/s east, a fix every 10 s: on its way, above its own limit of 20.
        for step in 0..<4 {
            Self.fix(
                &registry,
                longitude: 0.1 + Double(step) * 0.0036,
                at: 1_000 + Int64(step) * 10_000,
                offset: Int64(step)
            )
        }
        let card = try Self.json(registry.statusCard(of: "d", now: 0))
        let activity = try #require(card["activity"] as? [String: Any])
        let trip = try #require(activity["trip"] as? [String: Any])
        #expect(trip["announced"] as? Bool == true)
        #expect((trip["distanceMeters"] as? Double ?? 0) > 1_000)
        #expect((trip["start"] as? [String: Any])?["timestamp"] as? String == Timestamp.rfc3339(1_000))
        let speeding = try #require(activity["speeding"] as? [String: Any])
        #expect(speeding["announced"] as? Bool == true)
        #expect(speeding["since"] as? String == Timestamp.rfc3339(11_000))
        let limits = try #require(activity["limits"] as? [String: Any])
        #expect(limits["speedLimit"] as? Double == 20)
        #expect(limits["silenceSeconds"] as? Int == 900)
        #expect(limits["speedLimitInForce"] as? Double == 20)

        let liveness = try #require(card["liveness"] as? [String: Any])
        #expect(liveness["silentAfterSeconds"] as? Int == 900)
        #expect(liveness["silentSince"] is NSNull, "the card's time is before the deadline")
        let later = try Self.json(registry.statusCard(of: "d", now: 931_000 + 900_000))
        #expect((later["liveness"] as? [String: Any])?["silentSince"] as? String == Timestamp.rfc3339(931_000))

        let plain = DeviceRegistry(tracker: Self.tracker, states: [DeviceState(deviceId: "d")])
        #expect(try Self.json(plain.statusCard(of: "d", now: 0))["activity"] == nil)
        #expect(try Self.json(plain.statusCard(of: "d", now: 0))["liveness"] == nil)
    }

    @Test("an approach under way shows when the device is expected at the edge, and how long that is from its fix")
    func approachETA() throws {
        var registry = DeviceRegistry(tracker: Self.tracker)
        var events: [DeviceEvent] = []
        let gate = Pin(id: "g", center: Coordinate(latitude: 0.5, longitude: 0.5)!, radius: 200, approachSeconds: 120)!
        _ = registry.apply(
            DeviceCommand.track(deviceId: "d", pin: gate),
            origin: MessageOrigin(topic: "c", partition: 2, offset: 0, timestamp: 0),
            events: &events
        )
        // 0.01 degrees (1113 m) west of the centre, heading east at 20 m/s: 913 m to the edge, 45.6 s.
        let position = Position(
            deviceId: "d",
            coordinate: Coordinate(latitude: 0.5, longitude: 0.49)!,
            timestamp: 1_795_000_000_000,
            accuracy: 5,
            speed: 20,
            heading: 90
        )
        _ = registry.apply(position, origin: Self.origin(0), events: &events)
        #expect(events.contains { $0.type == "geofence.approaching" })
        let card = try Self.json(registry.statusCard(of: "d", now: 0))
        let approach = try #require((card["pins"] as? [[String: Any]])?.first?["approach"] as? [String: Any])
        #expect(approach["inProgress"] as? Bool == true && approach["seconds"] as? Int == 120)
        #expect(approach["etaSeconds"] as? Int == 45, "\(approach)")
        #expect((approach["expectedAt"] as? String)?.hasPrefix("2026-11-18T11:07:2") == true, "\(approach)")
    }

    @Test(
        "a map view from a bbox, across the antimeridian too; malformed boxes are refused",
        arguments: [
            ("7,48,8.5,49", true), ("170,-10,-170,10", true), ("7,49,8,48", false), ("7,48,8", false),
            ("7,48,8,x", false), ("-181,0,0,1", false), ("0,-91,1,0", false), ("7,,8,9", false),
        ]
    )
    func mapViews(text: String, valid: Bool) {
        #expect((MapView(bbox: text) != nil) == valid)
    }

    @Test("map selection: only devices in view, every one under the limit, an even sample over it")
    func mapSelection() throws {
        var registry = DeviceRegistry(tracker: Self.tracker)
        var events: [DeviceEvent] = []
        for index in 0..<100 {
            let longitude = index < 60 ? 0.2 : 1.5  // 60 in the western box, 40 in the eastern
            _ = registry.apply(
                Self.position("d\(index)", latitude: 0.5, longitude: longitude, at: 1_000),
                origin: Self.origin(Int64(index)),
                events: &events
            )
        }
        registry.updateLastFixes()
        let west = MapView(west: 0, south: 0, east: 1, north: 1)
        var selection = DeviceMapSelection(view: west, limit: 100, from: [registry])
        #expect(selection.inView == 60 && selection.shown == 60)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(selection.json())) as? [String: Any])
        #expect(object["sampled"] as? Bool == false)

        selection = DeviceMapSelection(view: west, limit: 7, from: [registry])
        object = try #require(try JSONSerialization.jsonObject(with: Data(selection.json())) as? [String: Any])
        let ids = try #require(object["devices"] as? [[String: Any]]).compactMap { $0["deviceId"] as? String }
        #expect(ids.count == 7 && object["sampled"] as? Bool == true)
        #expect(ids == ["d0", "d9", "d18", "d27", "d36", "d45", "d54"], "spread over all 60, not the first 7")

        selection = DeviceMapSelection(view: west, limit: 100, maximumBytes: 2, from: [registry])
        #expect(selection.shown == 1 && selection.truncated, "the byte bound stops the answer")
    }
}
