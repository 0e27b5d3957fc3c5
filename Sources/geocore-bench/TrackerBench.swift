import Countries
import Foundation
import GeoCore
import Kafka
import PartitionOffsets
import StateStore
import TestSupport

/// The tracker (100k devices x 3 pins, 5M positions, then the bundled country index's two rules), the events'
/// encoding, and the store's writes of the changed devices, each when asked for (they share the fleet).
func benchmarkTrackerEncodingAndStore(random: inout SplitMix64) throws {
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
                ("accuracy disc", countryIndex as any CountryResolver),
                ("point lookup", PointLookup(index: countryIndex)),
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
    guard runs("store") else { return }

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
}
