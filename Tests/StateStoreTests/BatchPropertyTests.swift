import Foundation
import GeoCore
import PartitionOffsets
import StateStore
import TestSupport
import Testing

/// West of the prime meridian is "WW", east is "EE", beyond 60° of latitude is sea.
struct HemisphereCountries: CountryResolver {
    func countryCode(at coordinate: Coordinate) -> String? {
        abs(coordinate.latitude) > 60 ? nil : (coordinate.longitude < 0 ? "WW" : "EE")
    }

    /// The hemisphere when the whole disc lies in it (a degree of longitude is at most 111 km).
    func countryCode(at coordinate: Coordinate, within radius: Double) -> String? {
        let degrees = radius / 111_000
        guard abs(coordinate.latitude) + degrees <= 60, abs(coordinate.longitude) > degrees else { return nil }
        return countryCode(at: coordinate)
    }

    func countryName(for code: String) -> String { code == "WW" ? "Westland" : "Eastland" }
}

/// One input message as the pipeline sees it: decoded, with where it came from.
struct StreamedMessage {
    let body: InputMessage
    let origin: MessageOrigin
}

/// A random but reproducible stream: 30 devices wandering around a few pins near the prime meridian (so
/// they cross pins and the WW/EE border), tracking and untracking pins, with late and repeated positions.
func randomStream(count: Int, seed: UInt64) -> [StreamedMessage] {
    var random = SplitMix64(seed: seed)
    let pinCenters = [(0.0, 0.0), (0.0, 0.01), (0.01, -0.01), (59.99, 0.0)]
    var clocks = [Int64](repeating: 1_795_000_000_000, count: 30)
    var messages: [StreamedMessage] = []
    for offset in 0..<count {
        let device = random.next(below: 30)
        let deviceId = "device-\(device)"
        let origin = MessageOrigin(
            topic: "input",
            partition: Int32(device % 4),
            offset: Int64(offset),
            timestamp: 1_795_000_000_000 + Int64(offset)
        )
        if random.next(below: 8) == 0 {
            let center = pinCenters[random.next(below: pinCenters.count)]
            let command: DeviceCommand
            switch random.next(below: 5) {
            case 0: command = .untrack(deviceId: deviceId, pinId: "pin-\(random.next(below: 6))")
            case 1: command = .untrackAll(deviceId: deviceId)
            default:
                let pin = Pin(
                    id: "pin-\(random.next(below: 6))",
                    center: Coordinate(latitude: center.0, longitude: center.1)!,
                    radius: Double(50 + random.next(below: 2000)),
                    title: random.next(below: 2) == 0 ? nil : "Pin",
                    metadataJSON: random.next(below: 2) == 0 ? nil : #"{"k":1}"#
                )!
                command = .track(deviceId: deviceId, pin: pin)
            }
            messages.append(StreamedMessage(body: .command(command), origin: origin))
        } else {
            // Mostly forward in time; sometimes a late or a repeated fix.
            switch random.next(below: 10) {
            case 0: clocks[device] -= Int64(random.next(below: 5000))
            case 1: break
            default: clocks[device] += Int64(1000 + random.next(below: 5000))
            }
            let center = pinCenters[random.next(below: pinCenters.count)]
            let position = Position(
                deviceId: deviceId,
                coordinate: Coordinate(
                    latitude: center.0 + random.uniform(-0.03, 0.03),
                    longitude: center.1 + random.uniform(-0.03, 0.03)
                )!,
                timestamp: clocks[device],
                accuracy: random.next(below: 5) == 0 ? nil : random.uniform(1, 80),
                languages: random.next(below: 4) == 0 ? ["fr-BE"] : []
            )
            messages.append(StreamedMessage(body: .position(position), origin: origin))
        }
    }
    return messages
}

extension DeviceRegistry {
    /// Applies a batch of messages in order, returning their events.
    mutating func apply(_ messages: ArraySlice<StreamedMessage>) -> [DeviceEvent] {
        var events: [DeviceEvent] = []
        for message in messages {
            switch message.body {
            case .position(let position): _ = apply(position, origin: message.origin, events: &events)
            case .command(let command): _ = apply(command, origin: message.origin, events: &events)
            }
        }
        return events
    }
}

@Suite("Batch properties", .timeLimit(.minutes(5)))
struct BatchPropertyTests {
    static let tracker = DeviceTracker(
        configuration: TrackerConfiguration(maxPinsPerDevice: 4),
        countries: HemisphereCountries()
    )

    @Test("processing the same input twice gives identical events with identical ids")
    func deterministic() {
        let stream = randomStream(count: 5000, seed: 7)
        var first = DeviceRegistry(tracker: Self.tracker)
        var second = DeviceRegistry(tracker: Self.tracker)
        let events = first.apply(stream[...])
        #expect(events == second.apply(stream[...]))
        #expect(Set(events.map(\.id)).count == events.count, "event ids must be unique")
        #expect(events.count > 200, "the stream must exercise the tracker: \(events.count) events")
        let types = Set(events.map(\.type))
        #expect(types.isSuperset(of: ["geofence.entered", "geofence.exited", "country.changed"]), "\(types)")
    }

    @Test(
        "splitting the input into batches anywhere, with the state stored and reloaded between batches, gives the same events",
        arguments: [1, 2, 3, 4]
    )
    func batchSplitting(seed: UInt64) throws {
        let stream = randomStream(count: 3000, seed: seed)
        var whole = DeviceRegistry(tracker: Self.tracker)
        let expected = whole.apply(stream[...])

        var random = SplitMix64(seed: seed &* 31)
        var cuts = Set((0..<random.next(below: 25) + 1).map { _ in random.next(below: stream.count) })
        cuts.insert(stream.count)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var events: [DeviceEvent] = []
        var start = 0
        for end in cuts.sorted() where end > start {
            // A new process each batch, as far as state goes: everything comes back from the store.
            let store = try StateStore(directory: directory)
            let offsets = try store.loadOffsets()
            #expect(
                start == 0 || offsets.values.max() == Int64(start),
                "stored progress must be where the last batch ended"
            )
            var registry = DeviceRegistry(tracker: Self.tracker, states: try store.loadDevices())
            events += registry.apply(stream[start..<end])
            try store.commit(states: registry.takeChanges(), offsets: Self.nextOffsets(stream[start..<end]))
            start = end
        }
        #expect(events == expected)
        let final = try StateStore(directory: directory).loadDevices()
        #expect(final.sorted { $0.deviceId < $1.deviceId } == whole.states.values.sorted { $0.deviceId < $1.deviceId })
    }

    /// The next offset of each input partition a batch covered.
    static func nextOffsets(_ batch: ArraySlice<StreamedMessage>) -> [TopicPartition: Int64] {
        var offsets: [TopicPartition: Int64] = [:]
        for message in batch {
            let key = TopicPartition(message.origin.topic, message.origin.partition)
            offsets[key] = max(offsets[key] ?? 0, message.origin.offset + 1)
        }
        return offsets
    }
}
