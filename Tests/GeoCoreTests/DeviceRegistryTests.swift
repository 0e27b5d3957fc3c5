import GeoCore
import Testing

@Suite("DeviceRegistry", .timeLimit(.minutes(5)))
struct DeviceRegistryTests {
    static let tracker = DeviceTracker(countries: RectangleCountries())

    @Test("every device keeps its own state as the registry grows to many devices")
    func manyDevices() {
        var registry = DeviceRegistry(tracker: Self.tracker)
        var events: [DeviceEvent] = []
        // Ids of every length from 1 to 40 bytes, unicode included, so the hash sees every tail size.
        let ids = (0..<20_000).map { index in String(repeating: "é", count: index % 20) + "\(index)" }
        for round in 0..<2 {
            for (index, id) in ids.enumerated() {
                let position = Position(
                    deviceId: id,
                    coordinate: Coordinate(latitude: Double(index % 90), longitude: Double(round))!,
                    timestamp: 1_795_000_000_000 + Int64(round)
                )
                let offset = Int64(round * ids.count + index)
                let origin = MessageOrigin(topic: "p", partition: Int32(index % 8), offset: offset, timestamp: 0)
                #expect(registry.apply(position, origin: origin, events: &events) == .tracked(.applied))
            }
        }
        let changes = registry.takeChanges()
        #expect(changes.count == ids.count)
        #expect(changes.map(\.deviceId) == ids, "each changed device once, in the order it first changed")
        #expect(
            changes.map(\.inputPartition) == ids.indices.map { Int32($0 % 8) },
            "each device's state names the partition its messages arrive on"
        )
        for (index, id) in ids.enumerated() where index.isMultiple(of: 97) {
            let state = registry.state(of: id)
            #expect(state?.lastFix?.coordinate == Coordinate(latitude: Double(index % 90), longitude: 1))
        }
        #expect(registry.state(of: "never-seen") == nil)
        #expect(registry.takeChanges().isEmpty, "changes are forgotten once taken")
    }

    @Test(
        "a take of the eventful changes hands out the devices that sent an event, and keeps the fix-only ones for a take of all"
    )
    func eventfulChanges() {
        var registry = DeviceRegistry(tracker: Self.tracker)
        var events: [DeviceEvent] = []
        var offset: Int64 = 0
        func fix(_ id: String, longitude: Double, at seconds: Int64) {
            let position = Position(
                deviceId: id,
                coordinate: Coordinate(latitude: 0.5, longitude: longitude)!,
                timestamp: 1_795_000_000_000 + seconds * 1000
            )
            events.removeAll()
            offset += 1
            let origin = MessageOrigin(topic: "p", partition: 0, offset: offset, timestamp: 0)
            #expect(registry.apply(position, origin: origin, events: &events) == .tracked(.applied))
        }
        fix("a", longitude: 0.5, at: 1)
        fix("b", longitude: 0.5, at: 1)
        #expect(registry.takeChanges(.eventful).map(\.deviceId) == ["a", "b"], "a first fix names a country")
        #expect(registry.takeChanges(.eventful).isEmpty)
        fix("a", longitude: 0.6, at: 2)
        #expect(events.isEmpty, "the same country: a fix only")
        fix("b", longitude: 0.6, at: 2)
        fix("b", longitude: 1.5, at: 3)
        #expect(!events.isEmpty, "another country")
        let eventful = registry.takeChanges(.eventful)
        #expect(eventful.map(\.deviceId) == ["b"])
        #expect(eventful.first?.lastFix?.coordinate.longitude == 1.5, "as it is now, its fixes before included")
        let all = registry.takeChanges(.all)
        #expect(all.map(\.deviceId) == ["a"], "b was logged as it is; a's fix waited for a take of all")
        #expect(all.first?.lastFix?.coordinate.longitude == 0.6)
        #expect(registry.takeChanges(.all).isEmpty)
        var command: [DeviceEvent] = []
        let untrack = DeviceCommand.untrackAll(deviceId: "a")
        let origin = MessageOrigin(topic: "c", partition: 0, offset: 1, timestamp: 0)
        _ = registry.apply(untrack, origin: origin, events: &command)
        #expect(registry.takeChanges(.eventful).map(\.deviceId) == ["a"], "a command is eventful, events or not")
    }

    @Test("a registry built from stored states continues them; stale positions change nothing")
    func restoredStates() {
        let stored = DeviceState(
            deviceId: "d",
            lastFix: Fix(coordinate: Coordinate(latitude: 1, longitude: 1)!, timestamp: 100, accuracy: nil)
        )
        var registry = DeviceRegistry(tracker: Self.tracker, states: [stored])
        var events: [DeviceEvent] = []
        let stale = Position(deviceId: "d", coordinate: Coordinate(latitude: 2, longitude: 2)!, timestamp: 50)
        #expect(
            registry.apply(
                stale,
                origin: MessageOrigin(topic: "p", partition: 0, offset: 0, timestamp: 0),
                events: &events
            ) == .tracked(.stale)
        )
        #expect(registry.takeChanges().isEmpty)
        #expect(registry.state(of: "d") == stored)
    }

    @Test("the pin count follows track, re-track, untrack and untrackAll, and starts from stored states")
    func pinCount() {
        var stored = DeviceState(deviceId: "stored")
        stored.pins = [TrackedPin(pin: Self.pin("s1"))]
        var registry = DeviceRegistry(tracker: Self.tracker, states: [stored])
        #expect(registry.pinCount == 1)
        var events: [DeviceEvent] = []
        var offset: Int64 = 0
        func apply(_ command: DeviceCommand) {
            offset += 1
            let origin = MessageOrigin(topic: "c", partition: 0, offset: offset, timestamp: offset)
            _ = registry.apply(command, origin: origin, events: &events)
        }
        apply(.track(deviceId: "d", pin: Self.pin("a")))
        apply(.track(deviceId: "d", pin: Self.pin("b")))
        apply(.track(deviceId: "e", pin: Self.pin("a")))
        #expect(registry.pinCount == 4)
        apply(.track(deviceId: "d", pin: Self.pin("a")))  // the same id again replaces, it does not add
        #expect(registry.pinCount == 4)
        apply(.untrack(deviceId: "d", pinId: "a"))
        apply(.untrack(deviceId: "d", pinId: "never-tracked"))
        #expect(registry.pinCount == 3)
        apply(.untrackAll(deviceId: "d"))
        #expect(registry.pinCount == 2)
    }

    @Test("a replay skips what a device's state already reflects, by partition and offset of each input topic")
    func replaySkipsWhatIsReflected() {
        // On partition 3: a track command, positions walking into the pin, an untrack, positions walking on.
        let center = Coordinate(latitude: 10, longitude: 10)!
        var messages: [(InputMessage, MessageOrigin)] = [
            (
                .command(.track(deviceId: "d", pin: Self.pin("a"))),
                MessageOrigin(topic: "c", partition: 3, offset: 40, timestamp: 1)
            )
        ]
        for step in 0..<9 {
            if step == 5 {
                let untrack = DeviceCommand.untrack(deviceId: "d", pinId: "a")
                messages.append((.command(untrack), MessageOrigin(topic: "c", partition: 3, offset: 41, timestamp: 1)))
            }
            let latitude = center.latitude + Double(step - 4) * 0.002  // 222 m steps through a 100 m pin
            let position = Position(
                deviceId: "d",
                coordinate: Coordinate(latitude: latitude, longitude: 10)!,
                timestamp: 1_795_000_000_000 + Int64(step) * 1000,
                accuracy: 5
            )
            messages.append(
                (.position(position), MessageOrigin(topic: "p", partition: 3, offset: Int64(100 + step), timestamp: 1))
            )
        }
        func run(
            _ registry: inout DeviceRegistry,
            _ slice: ArraySlice<(InputMessage, MessageOrigin)>
        ) -> ([DeviceEvent], [DeviceRegistry.Outcome]) {
            var events: [DeviceEvent] = []
            var kinds: [DeviceRegistry.Outcome] = []
            for (message, origin) in slice {
                switch message {
                case .position(let position):
                    kinds.append(registry.apply(position, origin: origin, events: &events))
                case .command(let command): kinds.append(registry.apply(command, origin: origin, events: &events))
                }
            }
            return (events, kinds)
        }
        var once = DeviceRegistry(tracker: Self.tracker)
        let (allEvents, _) = run(&once, messages[...])
        #expect(allEvents.map(\.type) == ["geofence.entered"])

        // A checkpoint after the untrack, then a replay of everything from the start, as a new owner whose
        // input starts before what the changelog reflects: the track command applied again would track the
        // pin anew and announce an initial entry that never happened.
        var first = DeviceRegistry(tracker: Self.tracker)
        let (before, _) = run(&first, messages[..<7])
        let stored = first.takeChanges()
        #expect(stored.first?.appliedOffsets == AppliedOffsets(positions: 104, commands: 41))
        #expect(stored.first?.inputPartition == 3)
        var restored = DeviceRegistry(tracker: Self.tracker, states: stored)
        let (after, kinds) = run(&restored, messages[...])
        #expect(kinds.prefix(7).allSatisfy { $0 == .alreadyApplied }, "\(kinds)")
        #expect(before + after == allEvents, "the replay neither repeats nor loses an event")
        #expect(restored.state(of: "d") == once.state(of: "d"))

        // Another partition's offsets say nothing about this one's: a lower offset there is applied.
        let moved = Position(deviceId: "d", coordinate: center, timestamp: 1_795_000_100_000, accuracy: 5)
        var events: [DeviceEvent] = []
        let outcome = restored.apply(
            moved,
            origin: MessageOrigin(topic: "p", partition: 5, offset: 1, timestamp: 1),
            events: &events
        )
        #expect(outcome == .tracked(.applied))
        #expect(restored.state(of: "d")?.appliedOffsets == AppliedOffsets(positions: 1, commands: -1))
        #expect(restored.state(of: "d")?.inputPartition == 5)
    }

    static func pin(_ id: String) -> Pin {
        Pin(id: id, center: Coordinate(latitude: 10, longitude: 10)!, radius: 100)!
    }
}
