import GeoCore
import Testing

/// Trips and stops from the fixes' movement (Traccar's defaults: 500 m or 5 minutes make a trip, 5 minutes parked end
/// it), table-driven on the pure tracker: each case is a device's fixes, and the events they give.
@Suite("DeviceTracker: trips and stops", .timeLimit(.minutes(5)))
struct TripRuleTests {
    /// One fix of a case: metres north of the start, seconds after it, its accuracy.
    struct Step: Sendable {
        let north: Double
        let east: Double
        let at: Int64
        let accuracy: Double?

        init(_ north: Double, east: Double = 0, at: Int64, accuracy: Double? = 5) {
            self.north = north
            self.east = east
            self.at = at
            self.accuracy = accuracy
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [Step]
        /// Each event's summary, with the second of the fix that gave it.
        let expected: [String]
        var testDescription: String { name }
    }

    /// A drive north at `speed` m/s from `from` seconds for `seconds`, a fix every `every` seconds, from `north` metres.
    static func drive(
        from start: Int64,
        seconds: Int64,
        every: Int64 = 10,
        speed: Double = 10,
        north: Double = 0
    )
        -> [Step]
    {
        stride(from: start, through: start + seconds, by: Int(every)).map {
            Step(north + Double($0 - start) * speed, at: $0)
        }
    }

    /// Standing at `north` with fixes a few metres apart (within their accuracy), every `every` seconds.
    static func stand(at north: Double, from start: Int64, seconds: Int64, every: Int64 = 30) -> [Step] {
        stride(from: start, through: start + seconds, by: Int(every)).enumerated().map { index, time in
            Step(north + Double(index % 3) * 3 - 3, east: Double(index % 2) * 4 - 2, at: time)
        }
    }

    static let cases: [Case] = [
        Case(
            name: "parked for an hour with its GPS jittering: nothing",
            steps: stand(at: 0, from: 0, seconds: 3_600),
            expected: []
        ),
        Case(
            name: "a 2 km drive, then parked: started at 500 m, ended 5 minutes after its last movement",
            steps: stand(at: 0, from: 0, seconds: 60) + drive(from: 70, seconds: 200, north: 10)
                + stand(at: 2_010, from: 280, seconds: 600),
            expected: ["120: trip started 513m", "580: trip ended parked 2013m 210s"]
        ),
        Case(
            name: "a 200 m hop in a minute, then parked: no trip",
            steps: stand(at: 0, from: 0, seconds: 60) + drive(from: 70, seconds: 60, every: 20, speed: 3, north: 20)
                + stand(at: 200, from: 150, seconds: 900),
            expected: []
        ),
        Case(
            name: "walking pace for 6 minutes, under 500 m: a trip by its duration",
            steps: [Step(0, at: 0)] + drive(from: 30, seconds: 360, every: 30, speed: 1, north: 30)
                + stand(at: 390, from: 420, seconds: 600),
            expected: ["300: trip started 300m", "690: trip ended parked 390m 390s"]
        ),
        Case(
            name:
                "a red light of 2 minutes in the middle: one trip (it set off at its second fix, where the first stood)",
            steps: [Step(0, at: 0)] + drive(from: 10, seconds: 100) + stand(at: 1_000, from: 130, seconds: 120)
                + drive(from: 260, seconds: 100, north: 1_010) + stand(at: 2_010, from: 380, seconds: 600),
            expected: ["60: trip started 500m", "680: trip ended parked 2010m 350s"]
        ),
        Case(
            name: "fixes stop for two hours mid-trip: it ends at its last movement when the next fix comes",
            steps: [Step(0, at: 0)] + drive(from: 10, seconds: 100) + [Step(5_000, at: 7_300), Step(5_000, at: 7_330)],
            expected: ["60: trip started 500m", "7300: trip ended gap 1000m 100s"]
        ),
        Case(
            name: "a motorway at a fix every 5 minutes: the second fix makes the trip",
            steps: [Step(0, at: 0), Step(9_000, at: 300), Step(18_000, at: 600)],
            expected: ["300: trip started 9000m"]
        ),
        Case(
            name: "fixes too inaccurate for geofences decide nothing",
            steps: [Step(0, at: 0)] + drive(from: 10, seconds: 100).map { Step($0.north, at: $0.at, accuracy: 800) },
            expected: []
        ),
    ]

    @Test("trips and stops", arguments: cases)
    func tripsAndStops(_ trial: Case) {
        var device = DeviceScenario(configuration: TrackerConfiguration(trips: TripRules()))
        var seen: [String] = []
        for step in trial.steps {
            for event in device.move(north: step.north, east: step.east, at: step.at, accuracy: step.accuracy) {
                seen.append("\(step.at): \(event.summary)")
            }
        }
        #expect(seen == trial.expected)
    }

    @Test("a trip's end says where and when it began and ended, how far, how long, how fast")
    func endContent() throws {
        var device = DeviceScenario(configuration: TrackerConfiguration(trips: TripRules()))
        var events: [DeviceEvent] = []
        for step in [Step(0, at: 0)] + Self.drive(from: 10, seconds: 100, speed: 12)
            + Self.stand(at: 1_200, from: 120, seconds: 600)
        {
            events += device.move(north: step.north, east: step.east, at: step.at, accuracy: step.accuracy)
        }
        let ended = try #require(events.last?.payload.tripEnd)
        // The drive's first fix is where the device stood: the trip begins there, at 10 s.
        #expect(ended.start.timestamp == DeviceScenario.start + 10_000, "the last fix where it stood")
        #expect(ended.end.timestamp == DeviceScenario.start + 110_000)
        #expect(abs(ended.distanceMeters - 1_200) < 1)
        #expect(ended.durationSeconds == 100)
        #expect(abs(ended.topSpeedMetersPerSecond - 12) < 0.1, "derived from the fixes")
        #expect(events.map(\.type) == ["trip.started", "trip.ended"])
    }

    @Test("a restart in the middle of a trip: the same events, with the same ids")
    func restartMidTrip() throws {
        let steps =
            [Step(0, at: 0)] + Self.drive(from: 10, seconds: 200) + Self.stand(at: 2_000, from: 220, seconds: 600)
        var uninterrupted = DeviceScenario(configuration: TrackerConfiguration(trips: TripRules()))
        var restarted = uninterrupted
        var expected: [DeviceEvent] = []
        var seen: [DeviceEvent] = []
        for (index, step) in steps.enumerated() {
            expected += uninterrupted.move(north: step.north, east: step.east, at: step.at)
            if index == 12 || index == 25 { try restarted.restart() }
            seen += restarted.move(north: step.north, east: step.east, at: step.at)
        }
        #expect(seen == expected)
        #expect(expected.map(\.type) == ["trip.started", "trip.ended"])
    }
}

/// Speeding against a limit, table-driven on the pure tracker.
@Suite("DeviceTracker: speeding", .timeLimit(.minutes(5)))
struct SpeedRuleTests {
    /// A fix: metres north, seconds, and the speed it reports (nil: derived from the fixes).
    typealias Step = (north: Double, at: Int64, speed: Double?)

    static let limited = TrackerConfiguration(speeding: SpeedRules(limitMetersPerSecond: 25))

    static func run(_ steps: [Step], configuration: TrackerConfiguration = limited) -> [String] {
        var device = DeviceScenario(configuration: configuration)
        return steps.flatMap { step in
            device.move(north: step.north, at: step.at, speed: step.speed).map { "\(step.at): \($0.summary)" }
        }
    }

    @Test("above the limit for 30 seconds: announced once; back under it: its end")
    func onceAnEpisode() {
        let steps: [Step] = [
            (0, 0, 20), (300, 10, 30), (600, 20, 30), (900, 30, 30), (1_220, 40, 32), (1_540, 50, 33),
            (1_740, 60, 20), (1_940, 70, 20),
        ]
        #expect(Self.run(steps) == ["40: speed exceeded 32>25", "60: speed normal after 50s"])
    }

    @Test("a burst of 20 seconds over it is no episode")
    func shortBurst() {
        #expect(Self.run([(0, 0, 30), (300, 10, 30), (600, 20, 30), (800, 30, 20), (1_000, 40, 30)]).isEmpty)
    }

    @Test("derived speeds: a steady drive over the limit is announced; a GPS jump there and back is not")
    func derivedSpeeds() {
        let drive: [Step] = (0...8).map { (Double($0) * 300, Int64($0) * 10, nil) }  // 30 m/s
        #expect(
            Self.run(drive) == ["40: speed exceeded 30>25"],
            "a speed from the second fix on, 30 s above it at 40 s"
        )
        // 10 m/s with a fix every 30 s; one fix 1.5 km off (50 m/s there, 50 m/s back).
        var jumpy: [Step] = (0...10).map { (Double($0) * 300, Int64($0) * 30, nil) }
        jumpy[5].north += 1_500
        #expect(Self.run(jumpy).isEmpty, "there and straight back")
        // A jump beyond any vehicle (150 m/s) decides nothing either, even with no duration asked.
        var configuration = Self.limited
        configuration.speeding.minimumDurationSeconds = 0
        var far: [Step] = (0...4).map { (Double($0) * 100, Int64($0) * 10, nil) }
        far[2].north += 1_500
        #expect(Self.run(far, configuration: configuration).isEmpty)
    }

    @Test("a device standing still has no derived speed: its jitter is never speeding")
    func jitter() {
        var configuration = Self.limited
        configuration.speeding = SpeedRules(limitMetersPerSecond: 0.5, minimumDurationSeconds: 0)
        let steps: [Step] = (0...20).map { (Double($0 % 2) * 8, Int64($0) * 10, nil) }
        #expect(Self.run(steps, configuration: configuration).isEmpty)
    }

    @Test("a device that stops without reporting its speed is under the limit: the episode ends")
    func stoppedWithDerivedSpeeds() {
        var steps: [Step] = (0...6).map { (Double($0) * 300, Int64($0) * 10, nil) }  // 30 m/s, derived
        steps += [(1_802, 90, nil), (1_800, 120, nil)]  // parked: within the fixes' accuracies
        #expect(Self.run(steps) == ["40: speed exceeded 30>25", "90: speed normal after 80s"])
        var device = DeviceScenario(configuration: Self.limited)
        let normal = steps.flatMap { device.move(north: $0.north, at: $0.at, speed: $0.speed) }.last
        guard case .speedNormal(let report) = normal?.payload else {
            Issue.record("expected speed.normal last, got \(String(describing: normal))")
            return
        }
        #expect(report.basis == .derivedSpeed && report.speedMetersPerSecond == 0, "standing: derived, 0")
    }

    @Test("a device's own limit from setLimits; without one and without a default, nothing is watched")
    func ownLimit() {
        let steps: [Step] = (0...5).map { (Double($0) * 200, Int64($0) * 10, 20) }
        #expect(Self.run(steps, configuration: TrackerConfiguration()).isEmpty, "no limit at all")
        var device = DeviceScenario()
        _ = device.command(.setLimits(deviceId: device.state.deviceId, speedLimit: 15, silentAfterSeconds: nil))
        var seen = steps.flatMap { step in device.move(north: step.north, at: step.at, speed: step.speed).map(\.summary)
        }
        #expect(seen == ["speed exceeded 20>15"])
        _ = device.command(.setLimits(deviceId: device.state.deviceId, speedLimit: nil, silentAfterSeconds: 600))
        seen = device.move(north: 1_300, at: 60, speed: 20).map(\.summary)
        #expect(seen.isEmpty, "back to the default, which is none: the episode is dropped, no end announced")
        #expect(device.state.activity.speeding == nil)
        #expect(device.state.activity.silentAfterSeconds == 600)
    }

    @Test("a restart mid-episode: announced once, at the same fix, with the same id")
    func restartMidEpisode() throws {
        var uninterrupted = DeviceScenario(configuration: Self.limited)
        var restarted = uninterrupted
        var expected: [DeviceEvent] = []
        var seen: [DeviceEvent] = []
        for index in 0...8 {
            let (north, at, speed) = (Double(index) * 300, Int64(index) * 10, Double?(index < 7 ? 30 : 20))
            expected += uninterrupted.move(north: north, at: at, speed: speed)
            if index == 2 || index == 5 { try restarted.restart() }
            seen += restarted.move(north: north, at: at, speed: speed)
        }
        #expect(seen == expected)
        #expect(expected.map(\.type) == ["speed.exceeded", "speed.normal"])
    }
}

/// Silence by message time, on the pure tracker and the registry's sweep.
@Suite("DeviceTracker: silence", .timeLimit(.minutes(5)))
struct SilenceRuleTests {
    static let watched = TrackerConfiguration(liveness: LivenessRules(silentAfterSeconds: 600))

    @Test("a fix after a gap longer than the threshold: the silence and the resumption, the silence by its own id")
    func atTheNextFix() throws {
        var device = DeviceScenario(configuration: Self.watched)
        #expect(device.move(north: 0, at: 0).isEmpty)
        #expect(device.move(north: 0, at: 600).isEmpty, "exactly the threshold: not silent")
        let events = device.move(north: 0, at: 1_300)
        #expect(events.map(\.type) == ["device.silent", "device.resumed"])
        let silent = try #require(events.first)
        #expect(silent.id == "device.silent:truck-17:\(DeviceScenario.start + 600_000)")
        #expect(silent.time == DeviceScenario.start + 1_200_000, "silent from the last fix plus the threshold")
        guard case .deviceResumed(let resumption) = events[1].payload else {
            Issue.record("expected device.resumed, got \(events[1].type)")
            return
        }
        #expect(resumption.quietSeconds == 700)
    }

    @Test("announced by the stream's time: the same event; its next fix resumes it without a second")
    func byStreamTime() throws {
        var byFix = DeviceScenario(configuration: Self.watched)
        var bySweep = byFix
        _ = byFix.move(north: 0, at: 0)
        _ = bySweep.move(north: 0, at: 0)
        #expect(bySweep.tracker.silence(of: &bySweep.state, at: DeviceScenario.start + 599_000) == nil)
        let swept = try #require(bySweep.tracker.silence(of: &bySweep.state, at: DeviceScenario.start + 600_000))
        #expect(bySweep.tracker.silence(of: &bySweep.state, at: DeviceScenario.start + 900_000) == nil, "once")
        try bySweep.restart()
        #expect(bySweep.tracker.silence(of: &bySweep.state, at: DeviceScenario.start + 900_000) == nil, "restarted")
        let fixed = byFix.move(north: 0, at: 2_000)
        #expect(fixed.first == swept, "one silence, one event, whichever announced it")
        #expect(bySweep.move(north: 0, at: 2_000).map(\.type) == ["device.resumed"])
        #expect(bySweep.tracker.silence(of: &bySweep.state, at: DeviceScenario.start + 2_500_000) == nil)
        #expect(bySweep.tracker.silence(of: &bySweep.state, at: DeviceScenario.start + 2_600_000) != nil, "again")
    }

    @Test("announced by the stream's time, then a fix stamped before the deadline (it came late): resumed all the same")
    func lateFixAfterTheStreamsSilence() throws {
        var device = DeviceScenario(configuration: Self.watched)
        _ = device.move(north: 0, at: 0)
        #expect(device.tracker.silence(of: &device.state, at: DeviceScenario.start + 700_000) != nil)
        let events = device.move(north: 0, at: 300)
        #expect(events.map(\.type) == ["device.resumed"], "a device announced silent is back at its next fix")
        guard case .deviceResumed(let resumption) = events.first?.payload else { return }
        #expect(resumption.quietSeconds == 300)
        #expect(device.move(north: 0, at: 600).isEmpty, "once")
    }

    @Test("a fix heard late (the stream past its time): silent from when it came, not from its own time")
    func heardLate() throws {
        var device = DeviceScenario(configuration: Self.watched)
        var events: [DeviceEvent] = []
        let fix = Position(
            deviceId: "truck-17",
            coordinate: DeviceScenario.pinCenter,
            timestamp: DeviceScenario.start,
            accuracy: 5
        )
        var areas = DeviceAreas()
        // It comes when the stream is an hour on.
        let heard = DeviceScenario.start + 3_600_000
        _ = device.tracker.apply(
            fix,
            origin: MessageOrigin(topic: "positions", partition: 0, offset: 0, timestamp: DeviceScenario.start),
            streamTime: heard,
            to: &device.state,
            areas: &areas,
            events: &events
        )
        #expect(device.state.lastHeard == heard)
        #expect(device.tracker.silenceDeadline(of: device.state) == heard + 600_000)
        #expect(device.tracker.silence(of: &device.state, at: heard + 599_000) == nil, "not silent as it comes")
        let silent = try #require(device.tracker.silence(of: &device.state, at: heard + 600_000))
        #expect(silent.id == "device.silent:truck-17:\(DeviceScenario.start)", "its last fix's")
        // Heard on time, and without a stream: from the fix's own time, nothing kept.
        _ = device.move(north: 0, at: 7_200)
        #expect(device.state.lastHeard == nil)
        #expect(device.tracker.silenceDeadline(of: device.state) == DeviceScenario.start + 7_800_000)
    }

    @Test("a device's own threshold from setLimits; none at all: not watched")
    func ownThreshold() {
        var device = DeviceScenario()
        _ = device.move(north: 0, at: 0)
        #expect(device.move(north: 0, at: 100_000).isEmpty, "no threshold")
        _ = device.command(.setLimits(deviceId: device.state.deviceId, speedLimit: nil, silentAfterSeconds: 120))
        #expect(device.move(north: 0, at: 100_200).map(\.type) == ["device.silent", "device.resumed"])
    }

    @Test("the registry's sweep: only the partition's devices past their deadlines, each once, counted as changed")
    func registrySweep() throws {
        var registry = DeviceRegistry(
            tracker: DeviceTracker(configuration: Self.watched, countries: RectangleCountries())
        )
        var events: [DeviceEvent] = []
        for (index, (device, partition, second)) in [("a", 0, 0), ("b", 0, 300), ("c", 1, 0), ("d", 0, 100)]
            .enumerated()
        {
            let position = Position(
                deviceId: device,
                coordinate: Coordinate(latitude: 10, longitude: 10)!,
                timestamp: DeviceScenario.start + Int64(second) * 1000,
                accuracy: 5
            )
            let origin = MessageOrigin(
                topic: "positions",
                partition: Int32(partition),
                offset: Int64(index),
                timestamp: 0
            )
            _ = registry.apply(position, origin: origin, events: &events)
        }
        _ = registry.takeChanges()
        events.removeAll()
        #expect(registry.announceSilences(inPartition: 0, upTo: DeviceScenario.start + 699_000, events: &events) == 1)
        #expect(events.map(\.deviceId) == ["a"])
        #expect(registry.announceSilences(inPartition: 0, upTo: DeviceScenario.start + 699_000, events: &events) == 0)
        #expect(
            registry.announceSilences(inPartition: 0, upTo: DeviceScenario.start + 10_000_000, events: &events) == 2
        )
        #expect(events.map(\.deviceId) == ["a", "d", "b"], "in the order of their deadlines")
        #expect(Set(registry.takeChanges(.eventful).map(\.deviceId)) == ["a", "b", "d"])
        #expect(registry.state(of: "c")?.activity.silenceAnnounced == false, "partition 1's time has not passed")
        // A registry made from stored states queues them too.
        var restored = DeviceRegistry(tracker: registry.tracker, states: [try #require(registry.state(of: "c"))])
        #expect(restored.announceSilences(inPartition: 1, upTo: DeviceScenario.start + 600_000, events: &events) == 1)
    }
}
