import GeoCore
import Testing

@Suite("DeviceTracker: polygon pins", .timeLimit(.minutes(5)))
struct PolygonRuleTests {
    /// A 400 m square depot with a 100 m square yard cut out of its middle.
    static let depot = DeviceScenario.squarePin(half: 200, holes: [50])

    @Test("entering and leaving a polygon, its hole counting as outside; distances are to the nearest edge")
    func enterExitAndHole() throws {
        var device = DeviceScenario()
        _ = device.track(Self.depot)
        #expect(device.move(north: 1000, at: 1).isEmpty)
        let entered = device.move(north: 120, at: 2)
        #expect(entered.map(\.summary) == ["entered depot"])
        let crossing = try #require(entered.first?.payload.entered)
        #expect(abs(crossing.distanceMeters - 70) < 1, "70 m to the hole's edge, 80 m to the outer edge")
        #expect(device.move(north: 0, at: 3).map(\.summary) == ["exited depot"], "the middle of the hole is outside")
        #expect(device.move(north: -120, at: 4).map(\.summary) == ["entered depot"])
        let exited = device.move(north: -260, at: 5)
        #expect(exited.map(\.summary) == ["exited depot"])
        let leaving = try #require(exited.first?.payload.exited)
        #expect(abs(leaving.distanceMeters - 60) < 1)
    }

    @Test(
        "initial state of a polygon on track, with hysteresis of the fix's accuracy",
        arguments: [
            // (metres north of the centre, accuracy, expected events)
            (120.0, 5.0, ["entered depot initial"]),
            (195.0, 10.0, []),  // 5 m inside the outer edge, accuracy 10 m: undecided
            (185.0, 10.0, ["entered depot initial"]),
            (55.0, 10.0, []),  // 5 m from the hole's edge
            (40.0, 5.0, []),  // in the hole: outside, which announces nothing
            (1000.0, 5.0, []),
        ]
    )
    func initialState(north: Double, accuracy: Double, expected: [String]) {
        var device = DeviceScenario()
        _ = device.move(north: north, at: 1, accuracy: accuracy)
        #expect(device.track(Self.depot).map(\.summary) == expected)
    }

    @Test(
        "jitter within the accuracy at the outer edge and at the hole's edge gives no enter/exit pairs",
        arguments: [200.0, 50.0]
    )
    func jitterAtEdges(edge: Double) {
        var device = DeviceScenario()
        _ = device.track(Self.depot)
        #expect(device.move(north: 120, at: 0, accuracy: 5).map(\.summary) == ["entered depot initial"])
        let jitter = [-9.0, 8, -4, 9.5, 0.5, -9.9, 7, -1, 3, -8]
        for (second, offset) in jitter.enumerated() {
            let events = device.move(north: edge + offset, at: Int64(second) + 1, accuracy: 10)
            #expect(events.isEmpty, "jitter \(offset) m at the edge \(edge) m gave \(events.map(\.summary))")
        }
        // Leaving for real is still seen: into the hole, or out of the depot.
        let beyond = edge == 200 ? 230.0 : 20.0
        #expect(device.move(north: beyond, at: 20, accuracy: 10).map(\.summary) == ["exited depot"])
    }

    @Test("a MultiPolygon is inside when inside any of its polygons")
    func multiPolygon() throws {
        let west = DeviceScenario.pinCenter.offset(north: 0, east: -1000)
        let east = DeviceScenario.pinCenter.offset(north: 0, east: 1000)
        func square(_ center: Coordinate) -> [[[Double]]] {
            var ring = [(-100.0, -100.0), (-100, 100), (100, 100), (100, -100)].map { corner -> [Double] in
                let point = center.offset(north: corner.0, east: corner.1)
                return [point.longitude, point.latitude]
            }
            ring.append(ring[0])
            return [ring]
        }
        let shape = try PolygonShape(polygons: [square(west), square(east)], isMulti: true)
        var device = DeviceScenario()
        _ = device.track(try #require(Pin(id: "yards", shape: .polygon(shape))))
        #expect(device.move(east: 0, at: 1).isEmpty, "between the two")
        #expect(device.move(east: -1000, at: 2).map(\.summary) == ["entered yards"])
        #expect(device.move(east: 0, at: 3).map(\.summary) == ["exited yards"])
        #expect(device.move(east: 1050, at: 4).map(\.summary) == ["entered yards"])
    }

    @Test("vertex limits per pin and per device refuse a track with a reason, leaving the pins as they were")
    func vertexLimits() throws {
        let configuration = TrackerConfiguration(maxVerticesPerPin: 6, maxVerticesPerDevice: 10)
        var device = DeviceScenario(configuration: configuration)
        _ = device.track(DeviceScenario.squarePin(id: "a", half: 200, holes: [50]))  // 8 vertices
        let perPin = try #require(device.outcomes.last?.kind.rejection, "8 vertices over a limit of 6 are refused")
        #expect(perPin.contains("8 vertices") && perPin.contains("tracker.maxVerticesPerPin"), "\(perPin)")
        _ = device.track(DeviceScenario.squarePin(id: "b", half: 200))  // 4
        _ = device.track(DeviceScenario.squarePin(id: "c", half: 300))  // 4: 8 in all
        _ = device.track(DeviceScenario.squarePin(id: "d", half: 400))  // 12 in all: over 10
        let perDevice = try #require(
            device.outcomes.last?.kind.rejection,
            "12 vertices on one device over a limit of 10 are refused"
        )
        #expect(perDevice.contains("12 polygon vertices") && perDevice.contains("tracker.maxVerticesPerDevice"))
        #expect(device.state.pins.map(\.pin.id) == ["b", "c"])
        // Replacing a pin counts the new shape instead of the old one.
        _ = device.track(DeviceScenario.squarePin(id: "c", half: 350))
        #expect(device.outcomes.last == DeviceTracker.Outcome(kind: .applied))
    }

    @Test("vertices are kept to 1e-7 degree: finer ones come back rounded, from the shape and from the store, as typed")
    func verticesToAHundredNanodegrees() throws {
        let ring = [[7.81234567891, 48.5], [7.8223456, 48.5000000449], [7.82, 48.51], [7.81234567891, 48.5]]
        let shape = try PolygonShape(polygons: [[ring]], isMulti: false)
        let written = shape.coordinates[0][0]
        #expect(written[0] == [7.8123457, 48.5])
        // A vertex typed with seven decimals comes back as typed, not as a neighbouring double.
        #expect(written[1] == [7.8223456, 48.5])
        #expect("\(written[1][0])" == "7.8223456")
        #expect(shape.bounds.west == 7.8123457 && shape.bounds.north == 48.51)
        // Stored and read back: the same shape, bit for bit.
        let pin = try #require(Pin(id: "yard", shape: .polygon(shape)))
        var state = DeviceState(deviceId: "van-3")
        state.pins = [TrackedPin(pin: pin, membership: .outside)]
        let restored = try DeviceStateEncoding.decode(DeviceStateEncoding.encode(state))
        #expect(restored == state)
        #expect(DeviceStateEncoding.encode(restored) == DeviceStateEncoding.encode(state))
    }
}
