import Foundation
import GeoCore
import TestSupport

/// The fleet geofence catalog at issue 64's scale: 1,000,000 geofences, half circles of 50 to 500 m and half polygons of
/// 10 to 200 vertices, in 50,000 areas of 20 geofences within a kilometre of the area's centre (latitudes -60 to 70,
/// every longitude): how fast the catalog is filled, its resident bytes, and the lookup a fix makes (the geofences
/// whose box meets 100 m around it), which every position of a subscribed device pays.
func benchmarkCatalog(random: inout SplitMix64) {
    let (catalog, centers) = catalogLookup(random: &random)
    benchmarkCatalogTracker(catalog, areas: centers, random: &random)
}

/// Fills the catalog and measures its memory and a fix's lookup; returns it with its areas' centres.
private func catalogLookup(random: inout SplitMix64) -> (GeofenceCatalog, [Coordinate]) {
    let (areas, perArea) = (50_000, 20)
    let centers = (0..<areas).map { _ in
        Coordinate(
            latitude: Double.random(in: -60...70, using: &random),
            longitude: Double.random(in: -179..<179, using: &random)
        )!
    }
    func near(_ center: Coordinate, within metres: Double, using random: inout SplitMix64) -> Coordinate {
        let plane = LocalPlane(at: center)
        let (east, north) = (Double.random(in: -1...1, using: &random), Double.random(in: -1...1, using: &random))
        return Coordinate(
            latitude: center.latitude + north * metres / LocalPlane.metresPerDegree,
            longitude: center.longitude + east * metres / plane.metresPerDegreeEast
        )!
    }
    // Made and put one at a time, so that what is resident after is the catalog's alone: its shapes with it.
    let before = heapBytes()
    var catalog = GeofenceCatalog()
    var making = 0.0
    let fill = seconds {
        for (area, center) in centers.enumerated() {
            for index in 0..<perArea {
                var geofence: CatalogGeofence?
                making += seconds {
                    let at = near(center, within: 1_000, using: &random)
                    let radius = Double.random(in: 50...500, using: &random)
                    let shape: PinShape =
                        index % 2 == 0
                        ? .circle(center: at, radius: radius)
                        : polygon(around: at, radius: radius, vertices: Int.random(in: 10...200, using: &random))
                    geofence = CatalogGeofence(
                        geofence: Pin(id: "g-\(area)-\(index)", shape: shape)!,
                        tags: ["fleet-\(area % 8)"]
                    )
                }
                catalog.put(geofence!, at: 0)
            }
        }
    }
    let after = heapBytes()
    print(
        String(
            format: "catalog: %d geofences put in %.2f s (their shapes made besides); %.0f MB resident (%.0f bytes a"
                + " geofence, its shape included)",
            catalog.count,
            fill - making,
            Double(after - before) / 1e6,
            Double(after - before) / Double(catalog.count)
        )
    )
    let fixes = (0..<1_000_000).map { index in near(centers[index % areas], within: 1_000, using: &random) }
    var found = 0
    let lookup = seconds {
        for fix in fixes {
            let (north, east) = (100 / LocalPlane.metresPerDegree, 100 / LocalPlane(at: fix).metresPerDegreeEast)
            catalog.forEach(
                meeting: (
                    west: fix.longitude - east, south: fix.latitude - north, east: fix.longitude + east,
                    north: fix.latitude + north
                ),
                at: 1
            ) { _, _ in found += 1 }
        }
    }
    print(
        String(
            format: "catalog: a fix's lookup (100 m around it): %.0f ns each, %.2f geofences found on average",
            lookup / Double(fixes.count) * 1e9,
            Double(found) / Double(fixes.count)
        )
    )
    return (catalog, centers)
}

/// The tracker's CPU per position (issue 64's goal: at most 1.5 times the same stream with 3 pins a device): 100,000
/// devices, each driving about one of the catalog's areas (about 20 geofences within a kilometre), watching the whole
/// catalog through the tags every device has; against the same positions with 3 circle pins of 300 m a device within
/// its area instead, and with neither.
private func benchmarkCatalogTracker(_ geofences: GeofenceCatalog, areas: [Coordinate], random: inout SplitMix64) {
    let deviceCount = 100_000
    let homes = (0..<deviceCount).map { areas[$0 % areas.count] }
    let ids = (0..<deviceCount).map { "device-\($0)" }
    // Driving: a fix every 10 s, each up to 150 m (15 m/s) from the last in a random direction, kept within 1.5 km of
    // the area's centre (a step that would leave turns back).
    var positions: [Position] = []
    let positionCount = 2_000_000
    positions.reserveCapacity(positionCount)
    var offsets = Array(repeating: (east: 0.0, north: 0.0), count: deviceCount)
    for index in 0..<positionCount {
        let device = index % deviceCount
        let home = homes[device]
        let angle = Double.random(in: 0..<(2 * .pi), using: &random)
        let step = Double.random(in: 0...150, using: &random)
        var next = (east: offsets[device].east + step * _cos(angle), north: offsets[device].north + step * _sin(angle))
        if (next.east * next.east + next.north * next.north).squareRoot() > 1_500 {
            next = (offsets[device].east - step * _cos(angle), offsets[device].north - step * _sin(angle))
        }
        offsets[device] = next
        positions.append(
            Position(
                deviceId: ids[device],
                coordinate: Coordinate(
                    latitude: home.latitude + next.north / LocalPlane.metresPerDegree,
                    longitude: home.longitude + next.east / LocalPlane(at: home).metresPerDegreeEast
                )!,
                timestamp: 1_795_000_000_000 + Int64(index / deviceCount) * 10_000,
                accuracy: 10
            )
        )
    }
    func run(_ label: String, _ registry: inout DeviceRegistry) -> Double {
        var events: [DeviceEvent] = []
        events.reserveCapacity(1 << 16)
        var count = 0
        let elapsed = seconds {
            for (index, position) in positions.enumerated() {
                let origin = MessageOrigin(topic: "positions", partition: 0, offset: Int64(index), timestamp: 0)
                _ = registry.apply(position, origin: origin, events: &events)
                count += events.count
                events.removeAll(keepingCapacity: true)
            }
        }
        print(
            String(
                format: "catalog tracker: %@: %.2f us a position, %.2f events a position",
                label,
                elapsed / Double(positions.count) * 1e6,
                Double(count) / Double(positions.count)
            )
        )
        return elapsed
    }
    var configuration = TrackerConfiguration()
    configuration.catalogTags = (0..<8).map { "fleet-\($0)" }
    var withCatalog = DeviceRegistry(
        tracker: DeviceTracker(configuration: configuration, countries: Hemispheres(), catalog: FleetCatalog(geofences))
    )
    var withPins = DeviceRegistry(tracker: DeviceTracker(countries: Hemispheres()))
    var plain = DeviceRegistry(tracker: DeviceTracker(countries: Hemispheres()))
    var events: [DeviceEvent] = []
    for (device, home) in homes.enumerated() {
        for pin in 0..<3 {
            let center = Coordinate(latitude: home.latitude + Double(pin - 1) * 0.006, longitude: home.longitude)!
            _ = withPins.apply(
                .track(deviceId: ids[device], pin: Pin(id: "pin-\(pin)", center: center, radius: 300)!),
                origin: MessageOrigin(topic: "commands", partition: 0, offset: Int64(device * 3 + pin), timestamp: 0),
                events: &events
            )
        }
    }
    let none = run("no geofences", &plain)
    let pins = run("3 pins a device", &withPins)
    let catalog = run("the catalog (about 20 geofences within 1 km)", &withCatalog)
    print(
        String(
            format: "catalog tracker: geofence work a position, the catalog's against 3 pins': %.2fx (whole: %.2fx)",
            (catalog - none) / max(1e-9, pins - none),
            catalog / pins
        )
    )
}
