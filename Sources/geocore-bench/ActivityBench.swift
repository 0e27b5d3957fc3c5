import Foundation
import GeoCore
import TestSupport

/// Trips and speeding (issue 67) on the steady stream: 50k devices with 3 circle pins, each driving 20 fixes (a fix
/// every 10 s at 10 to 35 m/s, half reporting their speed) and standing 40 (its GPS jittering within its accuracy), in
/// turn; the tracker's rate with trips and a speed limit on, against the same positions with them off, in alternating
/// runs (goal: within 1.1x).
func benchmarkActivity() {
    let devices = 50_000
    var random = SplitMix64(seed: 67)
    let homes = (0..<devices).map { _ in
        Coordinate(
            latitude: Double.random(in: 40...55, using: &random),
            longitude: Double.random(in: -5...20, using: &random)
        )!
    }
    let ids = (0..<devices).map { "device-\($0)" }
    let speeds = (0..<devices).map { _ in Double.random(in: 10...35, using: &random) }
    let count = 2_000_000
    var at = homes
    let positions = (0..<count).map { index -> Position in
        let device = index % devices
        let step = index / devices
        let driving = (step + device) % 60 < 20
        let plane = LocalPlane(at: at[device])
        if driving {
            at[device] = Coordinate(
                latitude: at[device].latitude + speeds[device] * 10 / LocalPlane.metresPerDegree,
                longitude: at[device].longitude
            )!
        }
        let jitter = driving ? 0 : Double.random(in: -4...4, using: &random)
        return Position(
            deviceId: ids[device],
            coordinate: Coordinate(
                latitude: at[device].latitude + jitter / LocalPlane.metresPerDegree,
                longitude: at[device].longitude + jitter / plane.metresPerDegreeEast
            )!,
            timestamp: 1_795_000_000_000 + Int64(step) * 10_000,
            accuracy: 10,
            speed: device % 2 == 0 ? (driving ? speeds[device] : 0) : nil
        )
    }
    func registry(_ configuration: TrackerConfiguration) -> DeviceRegistry {
        var registry = DeviceRegistry(tracker: DeviceTracker(configuration: configuration, countries: Hemispheres()))
        var ignored: [DeviceEvent] = []
        for device in 0..<devices {
            for index in 0..<3 {
                let center = Coordinate(
                    latitude: homes[device].latitude + Double(index) * 0.01,
                    longitude: homes[device].longitude
                )!
                let origin = MessageOrigin(
                    topic: "commands",
                    partition: 0,
                    offset: Int64(device * 3 + index),
                    timestamp: 0
                )
                _ = registry.apply(
                    .track(deviceId: ids[device], pin: Pin(id: "pin-\(index)", center: center, radius: 300)!),
                    origin: origin,
                    events: &ignored
                )
            }
        }
        return registry
    }
    let off = TrackerConfiguration()
    let on = TrackerConfiguration(trips: TripRules(), speeding: SpeedRules(limitMetersPerSecond: 25))
    var rates: [Bool: [Double]] = [:]
    for round in 1...3 {
        for activity in [false, true] {
            var registry = registry(activity ? on : off)
            var events: [DeviceEvent] = []
            events.reserveCapacity(1 << 20)
            let time = seconds { applyAll(positions, to: &registry, events: &events) }
            rates[activity, default: []].append(Double(count) / time)
            report(
                "activity: \(devices) devices x 3 circle pins, trips and speeding \(activity ? "on" : "off") (round \(round))",
                count: count,
                seconds: time,
                unit: "positions"
            )
            if round == 1 && activity {
                let types = Dictionary(grouping: events, by: \.type).mapValues(\.count)
                    .sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                print("  events: \(types)")
            }
        }
    }
    let best = rates.mapValues { $0.max()! }
    print(
        String(
            format: "activity: CPU per position with trips and speeding on at %.2fx of off (goal: within 1.1x)",
            best[false]! / best[true]!
        )
    )
}
