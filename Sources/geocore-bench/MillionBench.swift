import Countries
import Foundation
import GeoCore
import Kafka
import PartitionOffsets
import StateStore
import TestSupport

/// A million devices as a worker holds them.
///
/// 3 circle pins each (and 100k devices with one 100-vertex polygon pin each), with a last fix, a country from the
/// bundled index and languages. Resident memory per device, positions per second through the registry with the real
/// country lookup, one checkpoint of every device (encoded and written to SQLite in one transaction, as the
/// checkpoint thread does), and loading them all back from the store (what a restart does before its first message).
func benchmarkMillion() throws {
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
