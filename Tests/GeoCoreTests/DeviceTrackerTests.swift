import GeoCore
import Testing

@Suite("DeviceTracker: geofences", .timeLimit(.minutes(5)))
struct GeofenceRuleTests {
    @Test("crossing into and out of a pin gives one entered and one exited")
    func enterAndExit() {
        var device = DeviceScenario()
        #expect(device.track(DeviceScenario.pin).isEmpty)
        #expect(device.move(north: 1000, at: 1).isEmpty, "first decision 'outside' announces nothing")
        #expect(device.move(north: 50, at: 2).map(\.summary) == ["entered exit-23"])
        #expect(device.move(north: 20, at: 3).isEmpty)
        #expect(device.move(north: 1000, at: 4).map(\.summary) == ["exited exit-23"])
        #expect(device.move(north: 2000, at: 5).isEmpty)
    }

    @Test("the events carry the pin as tracked, the position, the distance and the message's id")
    func eventContent() throws {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        _ = device.move(north: 1000, at: 1)
        let event = try #require(device.move(north: 50, east: 0, at: 2, accuracy: 7).first)
        #expect(event.id == "positions:0:2:0")
        #expect(event.deviceId == "truck-17")
        #expect(event.time == DeviceScenario.start + 2000)
        let crossing = try #require(event.payload.entered, "expected geofence.entered, got \(event.type)")
        #expect(crossing.pin == DeviceScenario.pin)
        #expect(crossing.pin.metadataJSON == #"{"road":"E40"}"#)
        #expect(abs(crossing.distanceMeters - 50) < 0.5)
        #expect(crossing.position.accuracy == 7)
        #expect(crossing.position.timestamp == DeviceScenario.start + 2000)
        #expect(!crossing.initial)
    }

    @Test(
        "initial state on track comes from the last known position",
        arguments: [
            // (metres north of the centre, accuracy, expected events on track)
            (0.0, 5.0, ["entered exit-23 initial"]),
            (190.0, 5.0, ["entered exit-23 initial"]),  // inside by more than the accuracy
            (198.0, 5.0, []),  // within the accuracy of the edge: undecided
            (1000.0, 5.0, []),  // outside: no event
            (100.0, 600.0, []),  // too inaccurate (over 500 m) to decide
        ]
    )
    func initialStateOnTrack(north: Double, accuracy: Double, expected: [String]) {
        var device = DeviceScenario()
        _ = device.move(north: north, at: 1, accuracy: accuracy)
        let events = device.track(DeviceScenario.pin)
        #expect(events.map(\.summary) == expected)
        if let event = events.first {
            #expect(event.id == "positions:0:1:0", "ids come from the track command's message")
            #expect(event.time == DeviceScenario.start + 1, "a command's events take its Kafka timestamp")
        }
    }

    @Test("without a known position, the first deciding fix gives the initial state")
    func initialStateAtFirstFix() {
        var inside = DeviceScenario()
        _ = inside.track(DeviceScenario.pin)
        #expect(inside.move(north: 198, at: 1).isEmpty, "undecided fixes do not count")
        #expect(inside.move(north: 10, at: 2).map(\.summary) == ["entered exit-23 initial"])
        #expect(inside.move(north: 1000, at: 3).map(\.summary) == ["exited exit-23"])

        var outside = DeviceScenario()
        _ = outside.track(DeviceScenario.pin)
        #expect(outside.move(north: 500, at: 1).isEmpty)
        #expect(outside.move(north: 10, at: 2).map(\.summary) == ["entered exit-23"], "a real entry, not initial")
    }

    @Test("hovering at the edge within the reported accuracy gives no enter/exit pairs")
    func hysteresis() {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        #expect(device.move(north: 0, at: 0, accuracy: 10).map(\.summary) == ["entered exit-23 initial"])
        // Jitter around the 200 m edge, always within 10 m of it.
        let jitter = [195.0, 205, 209, 191, 199, 208, 192, 201, 190.5, 209.9]
        for (second, north) in jitter.enumerated() {
            #expect(device.move(north: north, at: Int64(second) + 1, accuracy: 10).isEmpty, "at \(north) m")
        }
        #expect(device.move(north: 215, at: 20, accuracy: 10).map(\.summary) == ["exited exit-23"])
        for (second, north) in jitter.enumerated() {
            #expect(device.move(north: north, at: Int64(second) + 21, accuracy: 10).isEmpty, "at \(north) m")
        }
        #expect(device.move(north: 185, at: 40, accuracy: 10).map(\.summary) == ["entered exit-23"])
    }

    @Test("the margin is the fix's own accuracy, or the assumed accuracy when it reports none")
    func marginFollowsAccuracy() {
        var device = DeviceScenario(configuration: TrackerConfiguration(assumedAccuracyMeters: 30))
        _ = device.track(DeviceScenario.pin)
        _ = device.move(north: 0, at: 0)
        #expect(device.move(north: 220, at: 1, accuracy: 30).isEmpty, "220 m is within 30 m of the edge")
        #expect(device.move(north: 220, at: 2, accuracy: nil).isEmpty, "no accuracy: assume 30 m")
        #expect(device.move(north: 220, at: 3, accuracy: 5).map(\.summary) == ["exited exit-23"])
    }

    @Test("fixes less accurate than the limit decide nothing but still count as the latest position")
    func inaccurateFixes() {
        var device = DeviceScenario(configuration: TrackerConfiguration(maxAccuracyMeters: 100))
        _ = device.track(DeviceScenario.pin)
        _ = device.move(north: 5000, at: 0)
        #expect(device.move(north: 0, at: 1, accuracy: 150).isEmpty)
        #expect(device.outcomes.last?.kind == .appliedWithoutGeofences)
        #expect(device.state.lastFix?.timestamp == DeviceScenario.start + 1000)
        #expect(device.move(north: 0, at: 2, accuracy: 100).map(\.summary) == ["entered exit-23"])
        #expect(device.outcomes.last?.kind == .applied)
    }

    @Test("positions older than the newest applied one, or as old, change nothing and are counted")
    func staleAndDuplicate() {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        _ = device.move(north: 1000, at: 10)
        #expect(device.move(north: 0, at: 5).isEmpty)
        #expect(device.outcomes.last?.kind == .stale)
        #expect(device.move(north: 0, at: 10).isEmpty)
        #expect(device.outcomes.last?.kind == .duplicate)
        #expect(device.state.lastFix?.timestamp == DeviceScenario.start + 10_000)
        #expect(device.state.pins[0].membership == .outside)
        #expect(device.move(north: 0, at: 11).map(\.summary) == ["entered exit-23"])
    }

    @Test("untrack and untrackAll stop watching without an exit")
    func untrackEmitsNothing() throws {
        var device = DeviceScenario()
        let second = try #require(Pin(id: "depot", center: DeviceScenario.pinCenter, radius: 500))
        _ = device.track(DeviceScenario.pin)
        _ = device.track(second)
        #expect(device.move(north: 0, at: 1).map(\.summary) == ["entered exit-23 initial", "entered depot initial"])
        #expect(device.command(.untrack(deviceId: "truck-17", pinId: "exit-23")).isEmpty)
        #expect(device.state.pins.map(\.pin.id) == ["depot"])
        #expect(device.move(north: 5000, at: 2).map(\.summary) == ["exited depot"])
        _ = device.move(north: 0, at: 3)
        #expect(device.command(.untrackAll(deviceId: "truck-17")).isEmpty)
        #expect(device.state.pins.isEmpty)
        #expect(device.move(north: 5000, at: 4).isEmpty)
        // An id the device has no pin of is refused (dead-lettered, saying so), not silently taken.
        #expect(device.command(.untrack(deviceId: "truck-17", pinId: "never-tracked")).isEmpty)
        #expect(
            device.outcomes.last
                == DeviceTracker.Outcome(
                    kind: .rejected(
                        "device 'truck-17' has no pin 'never-tracked' to untrack (never tracked, or untracked already);"
                            + " it has no pins"
                    )
                )
        )
    }

    @Test("tracking an id again replaces the pin; an identical retry changes nothing")
    func retrack() throws {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        #expect(device.move(north: 0, at: 1).map(\.summary) == ["entered exit-23 initial"])
        let before = device.state
        #expect(device.track(DeviceScenario.pin).isEmpty, "a retried command must not announce again")
        #expect(device.state == before)

        let moved = try #require(
            Pin(id: "exit-23", center: DeviceScenario.pinCenter.offset(north: 5000, east: 0), radius: 300)
        )
        #expect(device.track(moved).isEmpty, "the replacement is outside: no event")
        #expect(device.state.pins.map(\.pin) == [moved])
        let back = try #require(
            Pin(id: "exit-23", center: DeviceScenario.pinCenter, radius: 300, title: "Exit 23 (new)")
        )
        #expect(device.track(back).map(\.summary) == ["entered exit-23 initial"])
        #expect(device.state.pins.count == 1)
    }

    @Test("a device may track up to the configured number of pins; more are refused with a reason")
    func pinLimit() throws {
        var device = DeviceScenario(configuration: TrackerConfiguration(maxPinsPerDevice: 3))
        for index in 0..<3 {
            _ = device.track(try #require(Pin(id: "p\(index)", center: DeviceScenario.pinCenter, radius: 50)))
            #expect(device.outcomes.last?.kind == .applied)
        }
        _ = device.track(try #require(Pin(id: "p3", center: DeviceScenario.pinCenter, radius: 50)))
        let reason = try #require(device.outcomes.last?.kind.rejection, "a fourth pin must be refused")
        #expect(reason.contains("3 pins"))
        #expect(device.state.pins.count == 3)
        _ = device.track(try #require(Pin(id: "p1", center: DeviceScenario.pinCenter, radius: 80)))
        #expect(device.outcomes.last?.kind == .applied, "replacing a tracked pin is not a new one")
    }

    @Test("announced states persist in the state value, so a restored state announces nothing again")
    func noReannounceAfterRestore() {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        #expect(device.move(north: 0, at: 1).map(\.summary) == ["entered exit-23 initial"])
        // A "restart": a new tracker and scenario continuing from the saved state.
        var restarted = DeviceScenario()
        restarted.state = device.state
        restarted.offset = device.offset
        #expect(restarted.move(north: 10, at: 2).isEmpty)
        #expect(restarted.track(DeviceScenario.pin).isEmpty)
        #expect(restarted.move(north: 1000, at: 3).map(\.summary) == ["exited exit-23"])
    }
}

@Suite("DeviceTracker: countries and languages", .timeLimit(.minutes(5)))
struct CountryRuleTests {
    static let inAA = Coordinate(latitude: 0.5, longitude: 0.5)!
    static let inBB = Coordinate(latitude: 0.5, longitude: 1.5)!
    static let atSea = Coordinate(latitude: 5, longitude: 5)!
    static let borderAA = Coordinate(latitude: 0.5, longitude: 0.9999)!
    static let borderBB = Coordinate(latitude: 0.5, longitude: 1.0001)!

    @Test("the first fix on land announces the country from null, with a language suggestion")
    func firstFix() throws {
        var device = DeviceScenario()
        let events = device.move(from: Self.inAA, at: 1, languages: ["de-CH", "en"])
        #expect(events.map(\.summary) == ["country nil->AA", "language de-AA"])
        #expect(events.map(\.id) == ["positions:0:0:0", "positions:0:0:1"])
        let change = try #require(events.first?.payload.countryChange)
        #expect(change.countryName == "Country AA")
        #expect(change.position.coordinate == Self.inAA)
        let suggestion = try #require(events.dropFirst().first?.payload.languageSuggestion)
        #expect(suggestion.basis == .deviceLanguage)
        #expect(suggestion.alternatives == ["fr-AA"])
    }

    @Test("one deciding fix across a border announces the change at once (a device that reports rarely)")
    func crossing() {
        var device = DeviceScenario()
        _ = device.move(from: Self.inAA, at: 1)
        #expect(device.move(from: Self.inBB, at: 3_600).map(\.summary) == ["country AA->BB", "language nl-BB"])
        #expect(device.move(from: Self.inBB, at: 7_200).isEmpty)
        #expect(device.state.country == "BB")
    }

    @Test("with countryConfirmations 2, a change waits for a second deciding fix in a row")
    func confirmations() {
        var device = DeviceScenario(configuration: TrackerConfiguration(countryConfirmations: 2))
        _ = device.move(from: Self.inAA, at: 1)
        #expect(device.move(from: Self.inBB, at: 2).isEmpty, "one fix is not yet a crossing")
        #expect(device.move(from: Self.inBB, at: 3).map(\.summary) == ["country AA->BB", "language nl-BB"])
    }

    @Test(
        "a fix decides only when its whole accuracy disc lies in one country",
        arguments: [
            // 11 m from the border: decided by a 5 m fix, not by a 20 m one, nor by one without accuracy
            // when the assumed accuracy is larger than the distance.
            (5.0 as Double?, "BB" as String?), (20, nil), (nil, "BB"),
        ]
    )
    func accuracyDecides(accuracy: Double?, expected: String?) {
        var device = DeviceScenario()
        _ = device.move(from: Self.inAA, at: 1)
        _ = device.move(from: Self.borderBB, at: 2, accuracy: accuracy)
        #expect(device.state.country == (expected ?? "AA"))
    }

    @Test("hovering along a border within its accuracy never flaps; then clearly across, at once")
    func noFlapping() {
        var device = DeviceScenario()
        _ = device.move(from: Self.borderAA, at: 0, accuracy: 20)
        #expect(device.state.country == "AA", "the first fix: the country its position lies in")
        for second in 1...20 {
            let side = second.isMultiple(of: 2) ? Self.borderAA : Self.borderBB
            #expect(device.move(from: side, at: Int64(second), accuracy: 20).isEmpty)
        }
        #expect(device.state.country == "AA")
        #expect(device.move(from: Self.inBB, at: 21).map(\.summary).first == "country AA->BB")
    }

    @Test("a poor fix just across decides nothing; an accurate one there does")
    func poorFix() {
        var device = DeviceScenario()
        _ = device.move(from: Self.inAA, at: 0)
        let justAcross = Coordinate(latitude: 0.5, longitude: 1.002)!  // about 220 m into BB
        #expect(device.move(from: justAcross, at: 1, accuracy: 500).isEmpty)
        #expect(device.move(from: justAcross, at: 2, accuracy: 50).map(\.summary).first == "country AA->BB")
    }

    @Test("fixes at sea keep the last country")
    func atSeaKeepsCountry() {
        var device = DeviceScenario()
        #expect(device.move(from: Self.atSea, at: 0).isEmpty, "no country yet, none at sea")
        #expect(device.move(from: Self.inAA, at: 1).map(\.summary).first == "country nil->AA")
        #expect(device.move(from: Self.atSea, at: 2).isEmpty)
        #expect(device.state.country == "AA")
        #expect(device.move(from: Self.inBB, at: 3).map(\.summary).first == "country AA->BB")
    }

    @Test("the device's languages are remembered from the last position that listed any")
    func languagesRemembered() {
        var device = DeviceScenario()
        _ = device.move(from: Self.atSea, at: 0, languages: ["fr-BE", "en"])
        let events = device.move(from: Self.inAA, at: 1)
        #expect(events.map(\.summary) == ["country nil->AA", "language fr-AA"])
    }

    @Test("geofence events come before country events of the same message, each with its own index")
    func eventOrderWithinMessage() throws {
        var device = DeviceScenario()
        _ = device.track(try #require(Pin(id: "border-gate", center: Self.inAA, radius: 100)))
        let events = device.move(from: Self.inAA, at: 1)
        #expect(events.map(\.summary) == ["entered border-gate initial", "country nil->AA", "language fr-AA"])
        #expect(events.map(\.id) == ["positions:0:1:0", "positions:0:1:1", "positions:0:1:2"])
    }
}
