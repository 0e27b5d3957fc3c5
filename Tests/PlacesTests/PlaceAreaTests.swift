import Countries
import Foundation
import GeoCore
import Places
import TestSupport
import Testing

/// The tracker skips the places lookup for a fix inside the area around its device's last one: it must announce
/// exactly what looking every fix up announces.
@Suite("Region and time-zone areas", .timeLimit(.minutes(5)))
struct PlaceAreaTests {
    @Test(
        "random drives across state, region, zone and country lines: the same events with areas as without",
        arguments: [
            // (where, latitude, longitude): each start of 40 devices driving about 300 m a fix for 150 fixes
            ("Indiana and Michigan: a state line and a time-zone line", 41.70, -86.90),
            ("the Rhine between France and Germany: nearest-place regions", 48.58, 7.78),
            ("Benelux: polygons in Belgium, places in the Netherlands", 51.20, 4.90),
            ("El Paso: Texas, New Mexico and Mexico", 31.85, -106.50),
            // Far north the local frames drift apart fastest: the areas' 1 % must hold there too.
            ("Tornio and Haparanda: Sweden and Finland, an hour apart, at 66°", 65.85, 24.15),
        ] as [(String, Double, Double)]
    )
    func sameEvents(place: String, latitude: Double, longitude: Double) {
        let tracker = DeviceTracker(countries: countryIndex, places: placeIndex)
        var registry = DeviceRegistry(tracker: tracker)
        var plain: [String: DeviceState] = [:]
        var random = SplitMix64(seed: UInt64(abs(latitude * 1000)))
        var withAreas: [String] = []
        var withoutAreas: [String] = []
        var offset: Int64 = 0
        for device in 0..<40 {
            let id = "device-\(device)"
            var latitude = latitude + random.uniform(-0.1, 0.1)
            var longitude = longitude + random.uniform(-0.1, 0.1)
            let heading = random.uniform(0, 2 * .pi)
            for step in 0..<150 {
                latitude += 0.0027 * cos(heading) + random.uniform(-0.0005, 0.0005)
                longitude += 0.0036 * sin(heading) + random.uniform(-0.0005, 0.0005)
                let position = Position(
                    deviceId: id,
                    coordinate: Coordinate(latitude: latitude, longitude: longitude)!,
                    timestamp: 1_795_248_000_000 + Int64(step) * 20_000,
                    accuracy: [5, 20, 60][step % 3]
                )
                offset += 1
                let origin = MessageOrigin(topic: "positions", partition: 0, offset: offset, timestamp: 0)
                var events: [DeviceEvent] = []
                _ = registry.apply(position, origin: origin, events: &events)
                withAreas += events.map(Self.summary)
                events.removeAll()
                var state = plain[id] ?? DeviceState(deviceId: id)
                _ = tracker.apply(position, origin: origin, to: &state, events: &events)
                plain[id] = state
                withoutAreas += events.map(Self.summary)
            }
        }
        #expect(withAreas == withoutAreas, "\(place)")
        #expect(withAreas.contains { $0.contains("region.changed") }, "\(place): the drives cross a region line")
    }

    static func summary(_ event: DeviceEvent) -> String {
        switch event.payload {
        case .regionChanged(let change):
            "\(event.id) region.changed \(change.from?.code ?? "-")>\(change.to?.code ?? "-")"
        case .timeZoneChanged(let change):
            "\(event.id) timezone.changed \(change.from?.identifier ?? "-")>\(change.to.identifier)"
        default: "\(event.id) \(event.type)"
        }
    }
}
