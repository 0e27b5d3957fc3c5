import Foundation
import GeoCore
import TestSupport

/// Circles against polygons: 50k devices wandering near 3 pins each, every pin kind over the same positions.
func benchmarkShapes() {
    let devices = 50_000
    var random = SplitMix64(seed: 16)
    let homes = (0..<devices).map { _ in
        Coordinate(
            latitude: Double.random(in: 40...55, using: &random),
            longitude: Double.random(in: -5...20, using: &random)
        )!
    }
    let ids = (0..<devices).map { "device-\($0)" }
    enum Kind: String, CaseIterable {
        case circles = "3 circle pins"
        case polygons = "3 polygon pins of 100 vertices"
        case motion = "3 circle pins with dwell and approach"
    }
    func pins(_ kind: Kind, device: Int) -> [Pin] {
        (0..<3).map { index in
            let center = Coordinate(
                latitude: homes[device].latitude + Double(index) * 0.01,
                longitude: homes[device].longitude
            )!
            switch kind {
            case .circles: return Pin(id: "pin-\(index)", center: center, radius: 300)!
            case .polygons: return Pin(id: "pin-\(index)", shape: polygon(around: center, radius: 300, vertices: 100))!
            case .motion:
                return Pin(id: "pin-\(index)", center: center, radius: 300, dwellSeconds: 300, approachSeconds: 120)!
            }
        }
    }
    func registry(_ kind: Kind) -> (DeviceRegistry, heapPerPin: Double, encodedPerPin: Double) {
        let heapBefore = heapBytes()
        var registry = DeviceRegistry(tracker: DeviceTracker(countries: Hemispheres()))
        var ignored: [DeviceEvent] = []
        for device in 0..<devices {
            for (index, pin) in pins(kind, device: device).enumerated() {
                let origin = MessageOrigin(
                    topic: "commands",
                    partition: 0,
                    offset: Int64(device * 3 + index),
                    timestamp: 0
                )
                _ = registry.apply(.track(deviceId: ids[device], pin: pin), origin: origin, events: &ignored)
            }
        }
        let changes = registry.takeChanges()
        let encoded = changes.reduce(0) { $0 + DeviceStateEncoding.encode($1).count }
        let empty = DeviceStateEncoding.encode(DeviceState(deviceId: ids[0], inputPartition: 0)).count * devices
        let heapPerPin = Double(heapBytes() - heapBefore) / Double(devices * 3)
        return (registry, heapPerPin, Double(encoded - empty) / Double(devices * 3))
    }
    let count = 2_000_000
    /// Two ways devices report.
    ///
    /// Driving: a fix every 10 s, 150 m on from the last, turning a little, kept within 2 km of home. Sparse: a fix
    /// anywhere within 2 to 3 km of home every 500 s, so that most paths between fixes cross a pin's box and many cross
    /// a pin: the most a crossing check can cost.
    enum Workload: String, CaseIterable {
        case driving = "driving, a fix every 10 s"
        case sparse = "sparse, a fix anywhere near home every 500 s"
    }
    func moves(_ workload: Workload) -> [Position] {
        var random = SplitMix64(seed: 17)
        var at = homes
        var headings = (0..<devices).map { _ in Double.random(in: 0..<360, using: &random) }
        return (0..<count).map { index -> Position in
            let device = index % devices
            let home = homes[device]
            let coordinate: Coordinate
            switch workload {
            case .sparse:
                coordinate = Coordinate(
                    latitude: home.latitude + Double.random(in: -0.02...0.03, using: &random),
                    longitude: home.longitude + Double.random(in: -0.02...0.02, using: &random)
                )!
            case .driving:
                headings[device] += Double.random(in: -20...20, using: &random)
                if at[device].distance(to: home) > 2_000 {
                    // Turn back towards home.
                    let plane = LocalPlane(at: at[device])
                    let x = plane.x(longitude: home.longitude)
                    let y = plane.y(latitude: home.latitude)
                    headings[device] = atan2(x, y) * 180 / Double.pi
                }
                let radians = headings[device] * Double.pi / 180
                let plane = LocalPlane(at: at[device])
                coordinate = Coordinate(
                    latitude: at[device].latitude + 150 * cos(radians) / LocalPlane.metresPerDegree,
                    longitude: at[device].longitude + 150 * sin(radians) / plane.metresPerDegreeEast
                )!
            }
            at[device] = coordinate
            let step = Int64(index / devices)
            return Position(
                deviceId: ids[device],
                coordinate: coordinate,
                timestamp: 1_795_000_000_000 + step * (workload == .driving ? 10_000 : 500_000),
                accuracy: 10,
                speed: 15,
                heading: (headings[device].truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(
                    dividingBy: 360
                )
            )
        }
    }
    for workload in Workload.allCases {
        let positions = moves(workload)
        var rates: [Kind: [Double]] = [:]
        for round in 1...3 {
            for kind in Kind.allCases {
                var (registry, heapPerPin, encodedPerPin) = registry(kind)
                var shapeEvents: [DeviceEvent] = []
                shapeEvents.reserveCapacity(1 << 20)
                let time = seconds { applyAll(positions, to: &registry, events: &shapeEvents) }
                rates[kind, default: []].append(Double(count) / time)
                report(
                    "tracker (\(workload.rawValue)), \(devices) devices x \(kind.rawValue) (round \(round))",
                    count: count,
                    seconds: time,
                    unit: "positions"
                )
                if round == 1 {
                    let types = Dictionary(grouping: shapeEvents, by: \.type).mapValues(\.count)
                        .sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
                    print(
                        String(
                            format: "  %.0f resident bytes and %.0f changelog bytes per pin; events: %@",
                            heapPerPin,
                            encodedPerPin,
                            types
                        )
                    )
                }
            }
        }
        let best = rates.mapValues { $0.max()! }
        print(
            String(
                format: "shapes (%@): polygons of 100 vertices at %.2fx the rate of circles (target: within 2x, 0.5 "
                    + "or more); circles with dwell and approach at %.2fx",
                workload.rawValue,
                best[.polygons]! / best[.circles]!,
                best[.motion]! / best[.circles]!
            )
        )
    }
}
