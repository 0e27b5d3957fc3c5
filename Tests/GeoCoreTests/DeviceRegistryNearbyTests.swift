import GeoCore
import TestSupport
import Testing

/// The registry's index of last fixes answers as a scan of every device would, on both of its paths.
@Suite("Nearby devices and map views from the registry", .timeLimit(.minutes(5)))
struct DeviceRegistryNearbyTests {
    /// `count` devices at random around Strasbourg (within about 40 km), each with one fix.
    func registry(_ count: Int, seed: UInt64) -> (DeviceRegistry, [String: Coordinate]) {
        var random = SplitMix64(seed: seed)
        var registry = DeviceRegistry(tracker: DeviceTracker(countries: RectangleCountries()))
        var positions: [String: Coordinate] = [:]
        var events: [DeviceEvent] = []
        for number in 0..<count {
            let coordinate = Coordinate(latitude: random.uniform(48.2, 48.9), longitude: random.uniform(7.3, 8.3))!
            let id = "device-\(number)"
            positions[id] = coordinate
            _ = registry.apply(
                Position(deviceId: id, coordinate: coordinate, timestamp: 1_000, speed: 10),
                origin: MessageOrigin(topic: "positions", partition: 0, offset: Int64(number), timestamp: 1_000),
                events: &events
            )
        }
        registry.updateLastFixes()
        return (registry, positions)
    }

    @Test("nearby: the same devices, in the same order, as measuring every one (small and large radii)")
    func nearby() {
        let (registry, positions) = registry(5_000, seed: 7)
        let center = Coordinate(latitude: 48.58, longitude: 7.75)!
        for (radius, limit) in [(800.0, 50), (3_000.0, 20), (60_000.0, 30), (1_000_000.0, 5_000)] {
            let expected = positions.map { ($0.key, center.distance(to: $0.value)) }.filter { $0.1 <= radius }
                .sorted { ($0.1, $0.0) < ($1.1, $1.0) }.prefix(limit)
            let found = registry.nearby(to: center, within: radius, limit: limit)
            #expect(found.map(\.distance) == expected.map(\.1), "radius \(radius)")
            #expect(Set(found.map(\.state.deviceId)) == Set(expected.map(\.0)), "radius \(radius)")
            #expect(found.allSatisfy { $0.speed == 10 && $0.confirmedByFix })
        }
    }

    @Test("a moved device is found where it went, not where it was; a restored registry finds its devices")
    func moved() {
        var (registry, _) = registry(200, seed: 3)
        var events: [DeviceEvent] = []
        _ = registry.apply(
            Position(
                deviceId: "device-0",
                coordinate: Coordinate(latitude: 10, longitude: 10)!,
                timestamp: 2_000,
                speed: 5
            ),
            origin: MessageOrigin(topic: "positions", partition: 0, offset: 1_000, timestamp: 2_000),
            events: &events
        )
        registry.updateLastFixes()
        let there = registry.nearby(to: Coordinate(latitude: 10, longitude: 10)!, within: 100, limit: 5)
        #expect(there.map(\.state.deviceId) == ["device-0"])
        #expect(there.first?.speed == 5, "the speed the position reported")
        let restored = DeviceRegistry(tracker: registry.tracker, states: Array(registry.states.values))
        let restoredThere = restored.nearby(to: Coordinate(latitude: 10, longitude: 10)!, within: 100, limit: 5)
        #expect(restoredThere.first?.speed == nil, "not stored: unknown until the next fix")
        #expect(restoredThere.first?.confirmedByFix == false)
    }

    @Test("map views: the same devices as testing every one, small (the index) and large (a scan), across 180°")
    func views() {
        let (registry, positions) = registry(5_000, seed: 11)
        for view in [
            MapView(west: 7.70, south: 48.55, east: 7.80, north: 48.60),
            MapView(west: 7.0, south: 48.0, east: 9.0, north: 49.0),
            MapView.world,
            MapView(west: 170, south: -10, east: -170, north: 10),
        ] {
            var found: Set<String> = []
            registry.forEachState(inView: view) { state, _ in found.insert(state.deviceId) }
            #expect(found == Set(positions.filter { view.contains($0.value) }.keys), "\(view)")
        }
    }
}
