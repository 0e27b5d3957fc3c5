import Foundation
import GeoCore
import TestSupport

/// The operations page's questions over a million devices with 3 circle pins each: the map's device selection for
/// the whole world and for a city, and a status card.
func benchmarkMap(random: inout SplitMix64) {
    var fleet = DeviceRegistry(tracker: DeviceTracker(countries: Hemispheres()))
    var fleetEvents: [DeviceEvent] = []
    let fleetSize = 1_000_000
    for device in 0..<fleetSize {
        let id = "device-\(device)"
        let home = Coordinate(
            latitude: Double.random(in: -60...70, using: &random),
            longitude: Double.random(in: -180..<180, using: &random)
        )!
        for pin in 0..<3 {
            let center = Coordinate(latitude: home.latitude + Double(pin) * 0.01, longitude: home.longitude)!
            _ = fleet.apply(
                .track(deviceId: id, pin: Pin(id: "pin-\(pin)", center: center, radius: 300)!),
                origin: MessageOrigin(topic: "commands", partition: 0, offset: Int64(device * 3 + pin), timestamp: 0),
                events: &fleetEvents
            )
        }
        _ = fleet.apply(
            Position(deviceId: id, coordinate: home, timestamp: 1_795_000_000_000, accuracy: 10),
            origin: MessageOrigin(topic: "positions", partition: 0, offset: Int64(device), timestamp: 0),
            events: &fleetEvents
        )
        fleetEvents.removeAll(keepingCapacity: true)
    }
    _ = fleet.takeChanges()
    fleet.updateLastFixes()
    for (name, view) in [
        ("the whole world", MapView.world), ("a 1 x 1 degree box", MapView(west: 7, south: 48, east: 8, north: 49)),
        ("a city's box, 0.2 x 0.3 degrees", MapView(west: 7.6, south: 48.5, east: 7.9, north: 48.7)),
    ] {
        var bytes = 0
        var shown = 0
        let rounds = 5
        let time = seconds {
            for _ in 0..<rounds {
                let selection = DeviceMapSelection(view: view, limit: 2000, from: [fleet])
                bytes = selection.json().count
                shown = selection.shown
            }
        }
        print(
            String(
                format: "map of 1M devices, %@: %.1f ms per answer (%d devices shown, %d KB)",
                name,
                time * 1000 / Double(rounds),
                shown,
                bytes / 1024
            )
        )
    }
    // GET /devices/nearby's answer over the same fleet: the registry's grid of last fixes, nearest 10 within 5 km.
    var nearbyFound = 0
    let nearbyQueries = 10_000
    let nearbyTime = seconds {
        for query in 0..<nearbyQueries {
            let center = Coordinate(latitude: Double(query % 130) - 60, longitude: Double(query % 360) - 180)!
            let selection = DeviceNearbySelection(center: center, radius: 5_000, limit: 10, from: [fleet])
            nearbyFound += selection.devices.count
            _ = selection.json()
        }
    }
    print(
        String(
            format: "nearby answer of 1M devices, 5 km, nearest 10: %.1f µs each (%.2f found on average)",
            nearbyTime * 1e6 / Double(nearbyQueries),
            Double(nearbyFound) / Double(nearbyQueries)
        )
    )
    var cardBytes = 0
    let cards = 100_000
    let cardTime = seconds {
        for index in 0..<cards {
            cardBytes += fleet.statusCard(of: "device-\(index * 7 % fleetSize)", now: 0)!.json().count
        }
    }
    print(
        String(
            format: "status card of one of 1M devices: %.1f µs each (%d bytes)",
            cardTime * 1e6 / Double(cards),
            cardBytes / cards
        )
    )
}
