// Benchmarks of the core: message decoding, the tracker, and state store writes.
//
//   swift run -c release geocore-bench [--only decode|tracker|shapes|map|nearby|million|encode|store]
//
// 1. Decode: 1M position messages (the documented layout, RFC 3339 or epoch-ms timestamps, varied
//    devices, coordinates with 6 decimals as GPS receivers report them) decoded from their bytes on one core;
//    then the same with full 17-digit coordinates (as computed doubles print), and Foundation's
//    JSONDecoder on 50k of them for comparison.
// 2. Tracker: 100k devices tracking 3 pins each, then 5M positions through DeviceRegistry on one core.
//    Countries come from a stand-in resolver (two hemispheres), so this measures the tracker itself.
//    Shapes: the same wandering devices with 3 circle pins, 3 polygon pins of 100 vertices (the circles drawn
//    as polygons) and 3 circle pins with dwell and approach times, in alternating runs; heap and changelog
//    bytes per pin of each kind.
//    Map: the operations page's questions over 1M devices with 3 circle pins each (what the worker's loop
//    pauses for): the map's device selection for the whole world and for a city, and a status card.
//    Nearby: the nearby grid (issue 32) over 1M devices: placing and moving them, a 5 km query, a city's box.
//    Million: 1M devices with 3 circle pins (and 100k with a 100-vertex polygon): resident bytes per device,
//    positions/s with the bundled country index, a checkpoint of every device, loading them from the store.
// 3. Encode: the tracker's events as CloudEvents JSON, one buffer each, as the worker publishes them.
// 4. Store: batches of 10,000 changed devices written to SQLite (position-only, then with pins rewritten).
import Countries
import Foundation
import GeoCore
import Kafka
import StateStore
import TestSupport

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let (whole, fraction) = (ContinuousClock.now - start).components
    return Double(whole) + Double(fraction) / 1e18
}

func report(_ label: String, count: Int, seconds: Double, unit: String) {
    print(String(format: "%@: %.0f %@/s (%d in %.3f s)", label, Double(count) / seconds, unit, count, seconds))
}

var random = SplitMix64(seed: 2026)
let only: String? =
    CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--only" ? CommandLine.arguments[2] : nil
func runs(_ phase: String) -> Bool { only == nil || only == phase }

// MARK: 1. Decoding

let messageCount = 1_000_000
/// `messageCount` position messages in one buffer, and where each one is.
func makeMessages(fullPrecision: Bool) -> (payload: [UInt8], bounds: [Range<Int>]) {
    var random = SplitMix64(seed: 1)
    var payload: [UInt8] = []
    var bounds: [Range<Int>] = []
    payload.reserveCapacity(messageCount * 180)
    for index in 0..<messageCount {
        let start = payload.count
        var latitude = Double.random(in: 35...60, using: &random)
        var longitude = Double.random(in: -10...30, using: &random)
        if !fullPrecision {
            latitude = (latitude * 1e6).rounded() / 1e6
            longitude = (longitude * 1e6).rounded() / 1e6
        }
        let timestamp =
            index.isMultiple(of: 2)
            ? "\"\(Timestamp.rfc3339(1_795_000_000_000 + Int64(index) * 10))\""
            : "\(1_795_000_000_000 + Int64(index) * 10)"
        let text =
            #"{"deviceId":"truck-\#(index % 50_000)","lat":\#(latitude),"lon":\#(longitude),"timestamp":\#(timestamp),"#
            + #""accuracy":12.0,"speed":13.4,"heading":270\#(index % 10 == 0 ? #","languages":["fr-BE","en"]"# : "")}"#
        payload.append(contentsOf: text.utf8)
        bounds.append(start..<payload.count)
    }
    return (payload, bounds)
}

/// Decodes every message five times; returns the best time.
func timeDecoding(_ payload: [UInt8], _ bounds: [Range<Int>]) -> Double {
    var checksum = 0.0
    var times: [Double] = []
    for _ in 0..<5 {
        times.append(
            seconds {
                payload.withUnsafeBytes { bytes in
                    for range in bounds {
                        if case .success(let position) = Position.decode(
                            json: UnsafeRawBufferPointer(rebasing: bytes[range])
                        ) {
                            checksum += position.coordinate.latitude
                        } else {
                            fatalError("benchmark message failed to decode")
                        }
                    }
                }
            }
        )
    }
    precondition(checksum != 0)
    return times.min()!
}

print("geocore-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores")
if runs("decode") {
    let (payload, bounds) = makeMessages(fullPrecision: false)
    print("decode: \(messageCount) position messages, \(payload.count / messageCount) bytes each on average")
    report(
        "decode positions, 6-decimal coordinates (best of 5)",
        count: messageCount,
        seconds: timeDecoding(payload, bounds),
        unit: "positions"
    )
    let (fullPayload, fullBounds) = makeMessages(fullPrecision: true)
    report(
        "decode positions, 17-digit coordinates (best of 5)",
        count: messageCount,
        seconds: timeDecoding(fullPayload, fullBounds),
        unit: "positions"
    )

    struct FoundationPosition: Decodable {
        let deviceId: String
        let lat: Double
        let lon: Double
        let timestamp: Int64
        let accuracy: Double?
        let speed: Double?
        let heading: Double?
        let languages: [String]?
    }
    let foundationSample = bounds.prefix(100_000).enumerated().filter { $0.offset % 2 == 1 }.map {
        Data(payload[$0.element])
    }
    let decoder = JSONDecoder()
    var checksum = 0.0
    let foundationTime = try seconds {
        for data in foundationSample { checksum += try decoder.decode(FoundationPosition.self, from: data).lat }
    }
    precondition(checksum != 0)
    report(
        "Foundation JSONDecoder, for comparison (epoch-ms messages only)",
        count: foundationSample.count,
        seconds: foundationTime,
        unit: "positions"
    )
}

// MARK: 2. Tracker

struct Hemispheres: CountryResolver {
    func countryCode(at coordinate: Coordinate) -> String? { coordinate.longitude < 0 ? "WW" : "EE" }
    func countryCode(at coordinate: Coordinate, within radius: Double) -> String? {
        abs(coordinate.longitude) * 111_000 > radius ? countryCode(at: coordinate) : nil
    }
    func countryName(for code: String) -> String { code }
}

/// Resident bytes after handing freed memory back to the system (glibc's `malloc_trim`, looked up at run
/// time: Swift's Glibc module does not export malloc.h), to see what the pins cost.
func heapBytes() -> Int {
    if let trim = dlsym(nil, "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "0 0"
    return (Int(statm.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}
/// A regular polygon of `vertices` vertices through the circle's edge, as a depot would be drawn.
func polygon(around center: Coordinate, radius: Double, vertices: Int) -> PinShape {
    let plane = LocalPlane(at: center)
    var ring = (0..<vertices).map { index -> [Double] in
        let angle = Double(index) / Double(vertices) * 2 * Double.pi
        return [
            center.longitude + radius * sin(angle) / plane.metresPerDegreeEast,
            center.latitude + radius * cos(angle) / LocalPlane.metresPerDegree,
        ]
    }
    ring.append(ring[0])
    return .polygon(try! PolygonShape(polygons: [[ring]], isMulti: false))
}

// The operations page's questions over a million devices: the worker's loop answers them between batches,
// so their time is a pause of the worker.
if runs("nearby") { benchmarkNearby(random: &random) }
if runs("map") {
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

// Circles against polygons: 50k devices wandering near 3 pins each, every pin kind over the same positions.
if runs("shapes") {
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

// A million devices as a worker holds them: 3 circle pins each (and 100k devices with one 100-vertex polygon pin
// each), with a last fix, a country from the bundled index and languages. Resident memory per device, positions
// per second through the registry with the real country lookup, one checkpoint of every device (encoded and
// written to SQLite in one transaction, as the checkpoint thread does), and loading them all back from the
// store (what a restart does before its first message).
if runs("million") {
    let countries = try CountryIndex.bundled()
    let tracker = DeviceTracker(countries: countries, languages: try CountryLanguages.bundled())
    var random = SplitMix64(seed: 1_000_000)
    for (label, devices, polygonPins) in [
        ("1M devices x 3 circle pins", 1_000_000, false),
        ("100k devices x 1 polygon pin of 100 vertices", 100_000, true),
    ] {
        let homes = (0..<devices).map { _ in
            Coordinate(
                latitude: Double.random(in: 44...50, using: &random),
                longitude: Double.random(in: 0...10, using: &random)
            )!
        }
        let heapBefore = heapBytes()
        var fleet = DeviceRegistry(tracker: tracker)
        var fleetEvents: [DeviceEvent] = []
        fleetEvents.reserveCapacity(64)
        let languages = ["en-GB", "fr-FR"]
        for device in 0..<devices {
            let id = "device-\(device)"
            let pins =
                polygonPins
                ? [Pin(id: "zone", shape: polygon(around: homes[device], radius: 300, vertices: 100))!]
                : (0..<3).map { pin in
                    Pin(
                        id: "pin-\(pin)",
                        center: Coordinate(
                            latitude: homes[device].latitude + Double(pin) * 0.01,
                            longitude: homes[device].longitude
                        )!,
                        radius: 300
                    )!
                }
            for (index, pin) in pins.enumerated() {
                let origin = MessageOrigin(
                    topic: "commands",
                    partition: 0,
                    offset: Int64(device * 3 + index),
                    timestamp: 0
                )
                _ = fleet.apply(.track(deviceId: id, pin: pin), origin: origin, events: &fleetEvents)
            }
            let origin = MessageOrigin(topic: "positions", partition: 0, offset: Int64(device), timestamp: 0)
            let position = Position(
                deviceId: id,
                coordinate: homes[device],
                timestamp: 1_795_000_000_000,
                accuracy: 10,
                languages: languages.map { $0 }
            )
            _ = fleet.apply(position, origin: origin, events: &fleetEvents)
            fleetEvents.removeAll(keepingCapacity: true)
        }
        let heapPerDevice = Double(heapBytes() - heapBefore) / Double(devices)
        print(
            String(
                format: "%@: %.0f resident bytes per device (a device's state %d bytes inline, a tracked pin %d)",
                label,
                heapPerDevice,
                MemoryLayout<DeviceState>.stride,
                MemoryLayout<TrackedPin>.stride
            )
        )

        // Two more fixes per device, 150 m on each time, in the order a partitioned stream interleaves them.
        var ids = (0..<devices).map { "device-\($0)" }
        var positions: [Position] = []
        positions.reserveCapacity(devices * 2)
        for step in 1...2 {
            for device in 0..<devices {
                let at = Coordinate(
                    latitude: homes[device].latitude,
                    longitude: homes[device].longitude + 0.002 * Double(step)
                )!
                positions.append(
                    Position(
                        deviceId: ids[device],
                        coordinate: at,
                        timestamp: 1_795_000_000_000 + Int64(step) * 10_000,
                        accuracy: 10,
                        languages: languages
                    )
                )
            }
        }
        ids = []
        _ = fleet.takeChanges()
        let applyTime = seconds {
            for (index, position) in positions.enumerated() {
                let origin = MessageOrigin(
                    topic: "positions",
                    partition: 0,
                    offset: Int64(devices + index),
                    timestamp: 0
                )
                _ = fleet.apply(position, origin: origin, events: &fleetEvents)
                fleetEvents.removeAll(keepingCapacity: true)
            }
        }
        positions = []
        report(
            "  positions through the registry (bundled country index), one core",
            count: devices * 2,
            seconds: applyTime,
            unit: "positions"
        )

        let directory = NSTemporaryDirectory() + "geocore-bench-million-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try StateStore(directory: directory)
        var encodedBytes = 0
        let checkpointTime = try seconds {
            // As the worker does: the shard copies its changed devices, the checkpoint thread encodes them.
            let encoded = fleet.takeChanges().map(EncodedDevice.init)
            encodedBytes = encoded.reduce(0) { $0 + $1.bytes.count }
            try store.commit(devices: encoded, offsets: [TopicPartition("positions", 0): Int64(devices * 3)])
        }
        print(
            String(
                format:
                    "  checkpoint of all %d devices (encode and one SQLite transaction): %.2f s, %.0f bytes per device",
                devices,
                checkpointTime,
                Double(encodedBytes) / Double(devices)
            )
        )
        var loaded = 0
        let loadTime = try seconds {
            let reopened = try StateStore(directory: directory)
            let restarted = DeviceRegistry(tracker: tracker, states: try reopened.loadDevices())
            loaded = restarted.count
        }
        print(
            String(format: "  start-up from the local store: %d devices loaded into memory in %.2f s", loaded, loadTime)
        )
    }
}

guard runs("tracker") || runs("encode") || runs("store") else { exit(0) }
let deviceCount = 100_000
let pinsPerDevice = 3
var registry = DeviceRegistry(tracker: DeviceTracker(countries: Hemispheres()))
var events: [DeviceEvent] = []
events.reserveCapacity(1 << 20)
var homes: [Coordinate] = []
var deviceIds: [String] = []
for device in 0..<deviceCount {
    let home = Coordinate(
        latitude: Double.random(in: 40...55, using: &random),
        longitude: Double.random(in: -5...20, using: &random)
    )!
    homes.append(home)
    deviceIds.append("device-\(device)")
    for pin in 0..<pinsPerDevice {
        let center = Coordinate(latitude: home.latitude + Double(pin) * 0.01, longitude: home.longitude)!
        let origin = MessageOrigin(
            topic: "commands",
            partition: 0,
            offset: Int64(device * pinsPerDevice + pin),
            timestamp: 0
        )
        _ = registry.apply(
            .track(deviceId: deviceIds[device], pin: Pin(id: "pin-\(pin)", center: center, radius: 300)!),
            origin: origin,
            events: &events
        )
    }
}
_ = registry.takeChanges()

let positionCount = 5_000_000
var positions: [Position] = []
positions.reserveCapacity(positionCount)
for index in 0..<positionCount {
    let device = index % deviceCount
    let home = homes[device]
    // Wander within about 3 km of home: in and out of the pins now and then.
    let coordinate = Coordinate(
        latitude: home.latitude + Double.random(in: -0.02...0.03, using: &random),
        longitude: home.longitude + Double.random(in: -0.02...0.02, using: &random)
    )!
    positions.append(
        Position(
            deviceId: deviceIds[device],
            coordinate: coordinate,
            timestamp: 1_795_000_000_000 + Int64(index),
            accuracy: 10
        )
    )
}
events.removeAll(keepingCapacity: true)
/// The batch loop as the pipeline runs it: one exclusive access to the registry for the whole batch.
func applyAll(_ positions: [Position], to registry: inout DeviceRegistry, events: inout [DeviceEvent]) {
    for (index, position) in positions.enumerated() {
        let origin = MessageOrigin(
            topic: "positions",
            partition: 0,
            offset: Int64(index),
            timestamp: position.timestamp
        )
        _ = registry.apply(position, origin: origin, events: &events)
    }
}
let trackerTime = seconds { applyAll(positions, to: &registry, events: &events) }
report(
    "tracker, \(deviceCount) devices x \(pinsPerDevice) pins",
    count: positionCount,
    seconds: trackerTime,
    unit: "positions"
)
print("  \(events.count) events (\(events.filter { $0.type.hasPrefix("geofence") }.count) geofence)")

// The tracker with the bundled country index: the accuracy-disc rule (a fix decides its country only when its
// whole accuracy disc lies in it) beside the point lookup the tracker used before, in alternating runs over
// the same positions (Europe, land and sea, borders and coasts, 10 m accuracy).
/// The rule before: the country at the fix's point, whatever its accuracy.
struct PointLookup: CountryResolver {
    let index: CountryIndex
    func countryCode(at coordinate: Coordinate) -> String? { index.country(at: coordinate)?.code }
    func countryCode(at coordinate: Coordinate, within radius: Double) -> String? { countryCode(at: coordinate) }
    func countryName(for code: String) -> String { index.country(code: code)?.name ?? code }
}
if runs("tracker") {
    let countryIndex = try CountryIndex.bundled()
    let sample = Array(positions.prefix(1_000_000))
    for round in 1...2 {
        for (label, resolver) in [
            ("accuracy disc", countryIndex as any CountryResolver), ("point lookup", PointLookup(index: countryIndex)),
        ] {
            var real = DeviceRegistry(tracker: DeviceTracker(countries: resolver))
            var realEvents: [DeviceEvent] = []
            realEvents.reserveCapacity(1 << 20)
            let time = seconds { applyAll(sample, to: &real, events: &realEvents) }
            report(
                "tracker with the country index (\(label), round \(round))",
                count: sample.count,
                seconds: time,
                unit: "positions"
            )
            print(
                String(
                    format: "  %.0f ns per position; %d country changes",
                    time * 1e9 / Double(sample.count),
                    realEvents.filter { $0.type == "country.changed" }.count
                )
            )
        }
    }
}

// MARK: 3. Encode

if runs("encode") {
    // As the worker encodes them: appended to one buffer that is sent and emptied every 256 KB.
    let encoder = CloudEventEncoder()
    var bytes = 0
    var buffer: [UInt8] = []
    buffer.reserveCapacity(300 << 10)
    let encodeTime = seconds {
        for event in events {
            encoder.append(event, to: &buffer)
            if buffer.count >= 256 << 10 {
                bytes += buffer.count
                buffer.removeAll(keepingCapacity: true)
            }
        }
        bytes += buffer.count
    }
    report("encode, CloudEvents JSON", count: events.count, seconds: encodeTime, unit: "events")
    print("  \(bytes / max(1, events.count)) bytes each on average")
}
guard runs("store") else { exit(0) }

// MARK: 4. Store

let changes = registry.takeChanges()
let directory = NSTemporaryDirectory() + "geocore-bench-" + UUID().uuidString
defer { try? FileManager.default.removeItem(atPath: directory) }
let store = try StateStore(directory: directory)
let batchSize = 10_000
var encodedChanges: [EncodedDevice] = []
let encodeTime = seconds { encodedChanges = changes.map(EncodedDevice.init) }
report("encode device states (DeviceStateEncoding)", count: changes.count, seconds: encodeTime, unit: "devices")
let encodedBytes = encodedChanges.reduce(0) { $0 + $1.bytes.count }
print(String(format: "  %.0f bytes per device (3 pins each)", Double(encodedBytes) / Double(encodedChanges.count)))
do {
    var written = 0
    var batches = 0
    let time = try seconds {
        for start in stride(from: 0, to: encodedChanges.count, by: batchSize) {
            let batch = encodedChanges[start..<min(start + batchSize, encodedChanges.count)]
            try store.commit(devices: batch, offsets: [TopicPartition("positions", 0): Int64(start + batch.count)])
            written += batch.count
            batches += 1
        }
    }
    report("store, batches of \(batchSize) devices", count: written, seconds: time, unit: "devices")
    print(String(format: "  %.1f ms per batch", time * 1000 / Double(batches)))
}

// The worker's pattern: every checkpoint rewrites every device that moved, in one transaction, in the order
// they first moved: shuffled here.
let rounds = 5
var shuffling = SplitMix64(seed: 7)
do {
    let moved = encodedChanges.shuffled(using: &shuffling)
    let checkpointTime = try seconds {
        for round in 0..<rounds {
            try store.commit(
                devices: moved,
                offsets: [TopicPartition("positions", 0): Int64(changes.count * (round + 2))]
            )
        }
    }
    report(
        "store, \(rounds) checkpoints of all \(changes.count) devices",
        count: rounds * changes.count,
        seconds: checkpointTime,
        unit: "devices"
    )
    print(String(format: "  %.1f ms per checkpoint", checkpointTime * 1000 / Double(rounds)))
}
