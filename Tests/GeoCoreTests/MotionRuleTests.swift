import GeoCore
import Testing

@Suite("DeviceTracker: dwell", .timeLimit(.minutes(5)))
struct DwellRuleTests {
    static let pin = Pin(id: "yard", center: DeviceScenario.pinCenter, radius: 200, dwellSeconds: 60)!

    @Test("dwelled once per visit, at the first fix at or after the threshold, by message time")
    func oncePerVisit() {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        #expect(device.move(north: 1000, at: 0).isEmpty)
        #expect(device.move(north: 10, at: 10).map(\.summary) == ["entered yard"])
        #expect(device.move(north: 20, at: 40).isEmpty)
        #expect(device.move(north: 197, at: 60, accuracy: 10).isEmpty, "undecided at the edge: still inside")
        #expect(device.move(north: 15, at: 75).map(\.summary) == ["dwelled yard 65s"])
        #expect(device.move(north: 15, at: 200).isEmpty, "once per visit")
        #expect(device.move(north: 1000, at: 210).map(\.summary) == ["exited yard"])
        #expect(device.move(north: 0, at: 220).map(\.summary) == ["entered yard"])
        #expect(device.move(north: 0, at: 279).isEmpty)
        #expect(device.move(north: 0, at: 280).map(\.summary) == ["dwelled yard 60s"], "at exactly the threshold")
    }

    @Test("the dwell event says when the visit began and how long it has lasted")
    func content() throws {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        _ = device.move(north: 0, at: 5)
        let event = try #require(device.move(north: 0, at: 90).first)
        let stay = try #require(event.payload.dwelled, "expected geofence.dwelled, got \(event.type)")
        #expect(stay.insideSince == DeviceScenario.start + 5_000)
        #expect(stay.dwellSeconds == 85)
        #expect(stay.position.timestamp == DeviceScenario.start + 90_000)
        #expect(event.type == "geofence.dwelled")
    }

    @Test("fixes too inaccurate for geofences neither count nor announce the dwell")
    func inaccurateFixes() {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        _ = device.move(north: 0, at: 0)
        #expect(device.move(north: 0, at: 70, accuracy: 800).isEmpty)
        #expect(device.move(north: 0, at: 71).map(\.summary) == ["dwelled yard 71s"])
    }

    @Test("a restart or a failover in the middle of a dwell announces it once, at the same fix, with the same id")
    func restartMidDwell() throws {
        var uninterrupted = DeviceScenario()
        var restarted = DeviceScenario()
        for device in [0, 1] {
            var scenario = device == 0 ? uninterrupted : restarted
            _ = scenario.track(Self.pin)
            _ = scenario.move(north: 0, at: 0)
            _ = scenario.move(north: 0, at: 30)
            if device == 0 { uninterrupted = scenario } else { restarted = scenario }
        }
        try restarted.restart()
        let expected = uninterrupted.move(north: 0, at: 61)
        #expect(expected.map(\.summary) == ["dwelled yard 61s"])
        #expect(restarted.move(north: 0, at: 61) == expected)
        // After the announcement, a restart does not announce it again.
        try restarted.restart()
        #expect(restarted.move(north: 0, at: 120).isEmpty)
    }
}

@Suite("DeviceTracker: crossings between sparse fixes", .timeLimit(.minutes(5)))
struct CrossingRuleTests {
    @Test(
        "two fixes outside with a path through the pin by more than their accuracy give geofence.crossed",
        arguments: [
            // (east offset of the path from the centre, seconds between the fixes, accuracy, expected)
            (0.0, 10, 5.0, ["crossed exit-23"]),  // straight through the middle
            (150.0, 10, 5.0, ["crossed exit-23"]),  // 50 m inside the edge
            (193.0, 10, 10.0, []),  // 7 m inside the edge: within the accuracy, says nothing
            (250.0, 10, 5.0, []),  // passes outside
            (0.0, 601, 5.0, []),  // more than 10 minutes apart: the straight line says nothing
            (0.0, 10, 600.0, []),  // fixes too inaccurate to decide anything
        ]
    )
    func crossings(east: Double, gap: Int64, accuracy: Double, expected: [String]) {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        _ = device.move(north: -1500, east: east, at: 0, accuracy: accuracy)
        #expect(device.move(north: 1500, east: east, at: gap, accuracy: accuracy).map(\.summary) == expected)
    }

    @Test("the less accurate of the two fixes sets the depth the path must reach")
    func lessAccurateFixDecides() {
        for (first, second) in [(5.0, 40.0), (40.0, 5.0)] {
            var device = DeviceScenario()
            _ = device.track(DeviceScenario.pin)
            // The path passes 180 m from the centre: 20 m inside the edge, less than the 40 m of one fix.
            _ = device.move(north: -1500, east: 180, at: 0, accuracy: first)
            #expect(device.move(north: 1500, east: 180, at: 20, accuracy: second).isEmpty)
        }
    }

    @Test("the crossed event carries both fixes; a fix inside in between gives entered and exited instead")
    func content() throws {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.pin)
        _ = device.move(north: -1500, at: 0)
        let event = try #require(device.move(north: 1500, at: 20).first)
        let passage = try #require(event.payload.crossed, "expected geofence.crossed, got \(event.type)")
        #expect(passage.from.timestamp == DeviceScenario.start)
        #expect(passage.to.timestamp == DeviceScenario.start + 20_000)
        #expect(event.id == "positions:0:2:0")

        var dense = DeviceScenario()
        _ = dense.track(DeviceScenario.pin)
        _ = dense.move(north: -1500, at: 0)
        #expect(dense.move(north: 0, at: 10).map(\.summary) == ["entered exit-23"])
        #expect(dense.move(north: 1500, at: 20).map(\.summary) == ["exited exit-23"])
    }

    @Test(
        "a path through a polygon is judged by its depth inside, holes being outside",
        arguments: [
            // (east offset of a north-south path, expected)
            (0.0, ["crossed depot"]),  // through the hole, but through the ring around it both ways
            (120.0, ["crossed depot"]),
            (195.0, []),  // 5 m inside the edge, accuracy 10 m
            (260.0, []),
        ]
    )
    func polygonCrossings(east: Double, expected: [String]) {
        var device = DeviceScenario()
        _ = device.track(PolygonRuleTests.depot)
        _ = device.move(north: -800, east: east, at: 0, accuracy: 10)
        #expect(device.move(north: 800, east: east, at: 30, accuracy: 10).map(\.summary) == expected)
    }

    @Test(
        "a path whose inside stretch is shallow at its middle but deep elsewhere is still found",
        arguments: [(30.0, ["crossed lot"]), (45.0, [])]
    )
    func deepOnlyAtOneEnd(accuracy: Double, expected: [String]) throws {
        // A 60 m strip 2 km long with a 400 m square at its west end; the path runs along the strip 40 m from
        // its south edge: 20 m from the north edge in the middle, 40 m deep where it passes the square.
        let corners = [(0.0, -1000.0), (0, 1000), (60, 1000), (60, -600), (460, -600), (460, -1000), (0, -1000)]
        let ring = corners.map { corner -> [Double] in
            let point = DeviceScenario.pinCenter.offset(north: corner.0, east: corner.1)
            return [point.longitude, point.latitude]
        }
        let shape = try PolygonShape(polygons: [[ring]], isMulti: false)
        var device = DeviceScenario()
        _ = device.track(try #require(Pin(id: "lot", shape: .polygon(shape))))
        _ = device.move(north: 40, east: -1100, at: 0, accuracy: accuracy)
        #expect(device.move(north: 40, east: 1100, at: 20, accuracy: accuracy).map(\.summary) == expected)
    }

    @Test("a path that only passes through a hole crosses nothing")
    func throughHoleOnly() {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.squarePin(half: 400, holes: [300]))
        _ = device.move(north: -100, east: -200, at: 0, accuracy: 5)  // inside the hole: outside the pin
        #expect(device.move(north: 100, east: 200, at: 10, accuracy: 5).isEmpty)
    }

    @Test("a diagonal path clipping a corner: crossed only when it cuts deeper than the accuracy")
    func corner() {
        // The corner at (200, 200); a path from east-south to north-west passes it at a distance set by `shift`.
        for (shift, expected) in [(-30.0, ["crossed depot"]), (30.0, [String]())] {
            var device = DeviceScenario()
            _ = device.track(DeviceScenario.squarePin(half: 200))
            let offset = 200 + shift / 2.0.squareRoot() * 2
            _ = device.move(north: offset - 600, east: offset + 600, at: 0, accuracy: 5)
            #expect(
                device.move(north: offset + 600, east: offset - 600, at: 20, accuracy: 5).map(\.summary) == expected
            )
        }
    }
}

@Suite("DeviceTracker: approaching", .timeLimit(.minutes(5)))
struct ApproachRuleTests {
    static let pin = Pin(id: "gate", center: DeviceScenario.pinCenter, radius: 200, approachSeconds: 60)!

    @Test("announced once when the time to the edge at the reported speed falls within approachSeconds")
    func reportedSpeed() throws {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        #expect(device.move(north: -2000, at: 0, speed: 20, heading: 0).isEmpty, "90 s away")
        let events = device.move(north: -1400, at: 30, speed: 20, heading: 0)
        #expect(events.map(\.summary) == ["approaching gate eta 60s reported-speed"])
        let approach = try #require(events.first?.payload.approach)
        #expect(abs(approach.distanceMeters - 1200) < 2)
        #expect(approach.speedMetersPerSecond == 20)
        let start = DeviceScenario.start
        #expect(
            device.state.pins[0].approachArrival.map { abs($0 - (start + 90_000)) < 200 } == true,
            "expected at the edge 60 s after the fix of second 30"
        )
        #expect(device.move(north: -1000, at: 50, speed: 20, heading: 0).isEmpty, "once per approach")
        #expect(
            device.state.pins[0].approachArrival.map { abs($0 - (start + 90_000)) < 200 } == true,
            "each fix updates it: 800 m at 20 m/s from second 50"
        )
        #expect(device.move(north: 0, at: 100, speed: 20, heading: 0).map(\.summary) == ["entered gate"])
        #expect(device.state.pins[0].approachArrival == nil, "arrived")
        #expect(device.move(north: 1000, at: 150, speed: 20, heading: 0).map(\.summary) == ["exited gate"])
        // Re-armed by the exit: coming back announces again.
        #expect(
            device.move(north: 900, at: 200, speed: 20, heading: 180).map(\.summary)
                == ["approaching gate eta 35s reported-speed"]
        )
    }

    @Test("without a reported speed, the speed and direction come from the last two fixes")
    func derivedSpeed() {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        _ = device.move(north: -3000, at: 0)
        #expect(device.move(north: -2000, at: 50).isEmpty, "20 m/s, 90 s away")
        #expect(device.move(north: -1300, at: 85).map(\.summary) == ["approaching gate eta 55s derived-speed"])
    }

    @Test(
        "heading decides: towards the pin within the tolerance, not beside or away",
        arguments: [
            // (reported heading of a device south of the pin, expected)
            (0.0, ["approaching gate eta 45s reported-speed"]),
            (30.0, ["approaching gate eta 45s reported-speed"]),
            (60.0, []),
            (180.0, []),
        ]
    )
    func heading(heading: Double, expected: [String]) {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        #expect(device.move(north: -1100, at: 0, speed: 20, heading: heading).map(\.summary) == expected)
    }

    @Test("moving away re-arms the announcement; standing still with jitter approaches nothing")
    func movingAwayAndStandingStill() {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        #expect(device.move(north: -1100, at: 0, speed: 20, heading: 0).count == 1)
        #expect(device.move(north: -1000, at: 5, speed: 20, heading: 10).isEmpty)
        #expect(device.state.pins[0].approachArrival != nil)
        #expect(device.move(north: -1100, at: 10, speed: 20, heading: 180).isEmpty, "turned away: re-armed")
        #expect(device.state.pins[0].approachArrival == nil && !device.state.pins[0].approachAnnounced)
        #expect(device.move(north: -1000, at: 15, speed: 20, heading: 0).count == 1, "a new approach")

        var parked = DeviceScenario()
        _ = parked.track(Self.pin)
        // 50 m from the edge, moving 7 to 8 m between fixes of 5 m accuracy: 1.5 m/s if it were movement.
        let jitter = [(-250.0, 0.0), (-244, 5), (-251, 2), (-245, 7), (-252, 3), (-246, 6)]
        for (second, (north, east)) in jitter.enumerated() {
            let events = parked.move(north: north, east: east, at: Int64(second) * 5, accuracy: 5)
            #expect(events.isEmpty, "jitter of a parked device is not movement: \(events.map(\.summary))")
        }
    }

    @Test("a polygon's ETA is to its nearest edge")
    func polygon() {
        var device = DeviceScenario()
        _ = device.track(DeviceScenario.squarePin(id: "depot", half: 200, approachSeconds: 30))
        #expect(
            device.move(north: -780, at: 0, speed: 20, heading: 0).map(\.summary) == [
                "approaching depot eta 29s reported-speed"
            ]
        )
        #expect(device.move(north: -700, at: 4, speed: 20, heading: 0).isEmpty)
    }

    @Test("a restart or a failover in the middle of an approach neither repeats nor loses it")
    func restartMidApproach() throws {
        var device = DeviceScenario()
        _ = device.track(Self.pin)
        _ = device.move(north: -3000, at: 0, speed: 20, heading: 0)
        try device.restart()
        #expect(device.move(north: -1300, at: 30, speed: 20, heading: 0).count == 1, "announced after the restart")
        try device.restart()
        #expect(device.move(north: -1000, at: 45, speed: 20, heading: 0).isEmpty, "and not again after another")
        #expect(device.move(north: -100, at: 90, speed: 20, heading: 0).map(\.summary) == ["entered gate"])
    }
}
