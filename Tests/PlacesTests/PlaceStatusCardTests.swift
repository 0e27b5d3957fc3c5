import Countries
import Foundation
import GeoCore
import Places
import Testing

@Suite("The status card's places", .timeLimit(.minutes(5)))
struct PlaceStatusCardTests {
    @Test("region, nearest locality with its distance, and the time zone with the device's local time now")
    func card() throws {
        let tracker = DeviceTracker(countries: countryIndex, places: placeIndex)
        var registry = DeviceRegistry(tracker: tracker)
        let time: Int64 = 1_795_248_000_000  // 2026-11-21T08:00:00Z
        let position = Position(
            deviceId: "rig-4",
            coordinate: Coordinate(latitude: 41.8000, longitude: -86.7000)!,
            timestamp: time,
            accuracy: 10
        )
        var events: [DeviceEvent] = []
        _ = registry.apply(
            position,
            origin: MessageOrigin(topic: "positions", partition: 0, offset: 0, timestamp: time),
            events: &events
        )
        let now: Int64 = 1_795_255_200_000  // 2026-11-21T10:00:00Z
        let json = try #require(registry.statusCard(of: "rig-4", now: now)?.json())
        let card = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        let region = try #require(card["region"] as? [String: Any])
        #expect(region["code"] as? String == "US-MI" && region["source"] as? String == "polygon")
        let locality = try #require(card["locality"] as? [String: Any])
        #expect(locality["name"] as? String == "New Buffalo")
        #expect((locality["distanceMeters"] as? Double ?? .infinity) < 5_000)
        let zone = try #require(card["timeZone"] as? [String: Any])
        #expect(zone["timeZone"] as? String == "America/Detroit")
        #expect(zone["utcOffsetSeconds"] as? Int == -18_000)
        #expect(zone["localTime"] as? String == "2026-11-21T05:00:00-05:00")
    }

    @Test("without places the card says null for each")
    func withoutPlaces() throws {
        let registry = DeviceRegistry(tracker: DeviceTracker(countries: countryIndex))
        var copy = registry
        var events: [DeviceEvent] = []
        _ = copy.apply(
            Position(deviceId: "d", coordinate: Coordinate(latitude: 48.1, longitude: 11.5)!, timestamp: 1),
            origin: MessageOrigin(topic: "positions", partition: 0, offset: 0, timestamp: 1),
            events: &events
        )
        let json = try #require(copy.statusCard(of: "d", now: 0)?.json())
        let text = String(decoding: json, as: UTF8.self)
        #expect(text.contains(#""region":null,"locality":null,"timeZone":null"#))
    }
}
