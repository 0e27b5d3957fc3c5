import Countries
import GeoCore
import Places
import Testing

/// `region.changed` and `timezone.changed` from the tracker with the real indexes: the same rules as countries.
@Suite("Region and time-zone events", .timeLimit(.minutes(5)))
struct PlaceEventTests {
    /// One device driven through fixes, its state optionally encoded and decoded between them (a restart).
    struct Drive {
        var tracker = DeviceTracker(countries: countryIndex, places: placeIndex)
        var state = DeviceState(deviceId: "rig-4")
        var offset: Int64 = 0
        var time: Int64 = 1_795_248_000_000

        /// Applies fixes a minute apart; returns their place events as "type from>to".
        mutating func fixes(_ points: [(Double, Double)], accuracy: Double = 10) -> [String] {
            var events: [DeviceEvent] = []
            for (latitude, longitude) in points {
                offset += 1
                time += 60_000
                let position = Position(
                    deviceId: state.deviceId,
                    coordinate: Coordinate(latitude: latitude, longitude: longitude)!,
                    timestamp: time,
                    accuracy: accuracy
                )
                let origin = MessageOrigin(topic: "positions", partition: 0, offset: offset, timestamp: time)
                _ = tracker.apply(position, origin: origin, to: &state, events: &events)
            }
            return events.compactMap(Self.summary)
        }

        mutating func restart() {
            state = try! DeviceStateEncoding.decode(DeviceStateEncoding.encode(state))
        }

        static func summary(_ event: DeviceEvent) -> String? {
            switch event.payload {
            case .regionChanged(let change):
                return "region \(change.from?.code ?? "-")>\(change.to?.code ?? "-")"
            case .timeZoneChanged(let change):
                return "zone \(change.from?.identifier ?? "-")>\(change.to.identifier)"
            default: return nil
            }
        }
    }

    @Test("the first fix announces region and time zone; crossing announces each once; a restart repeats nothing")
    func crossing() throws {
        var drive = Drive()
        #expect(drive.fixes([(41.5934, -87.3464)]) == ["region ->US-IN", "zone ->America/Chicago"])
        #expect(drive.fixes([(41.60, -87.30), (41.62, -87.20)]) == [])
        drive.restart()
        #expect(drive.state.places.region?.code == "US-IN")
        #expect(drive.fixes([(41.70, -87.00)]) == [])
        // Michigan, on eastern time.
        #expect(
            drive.fixes([(41.7939, -86.7439), (41.80, -86.70)])
                == ["region US-IN>US-MI", "zone America/Chicago>America/Detroit"]
        )
        drive.restart()
        #expect(drive.fixes([(41.82, -86.65)]) == [])
    }

    @Test("driving along a boundary within the fixes' accuracy announces nothing")
    func alongTheBoundary() throws {
        var drive = Drive()
        // The Texas-New Mexico line at 32° N near El Paso: both on mountain time.
        #expect(drive.fixes([(31.95, -106.40)]) == ["region ->US-TX", "zone ->America/Denver"])
        // 30 m either side of the line, each fix's 100 m disc reaching across it.
        let zigzag = (0..<20).map { step in (step % 2 == 0 ? 32.0003 : 31.9997, -106.40 + Double(step) * 0.002) }
        #expect(drive.fixes(zigzag, accuracy: 100) == [])
        #expect(drive.state.places.region?.code == "US-TX")
        // Well inside New Mexico: the change is announced once.
        #expect(drive.fixes([(32.05, -106.40), (32.06, -106.39)], accuracy: 100) == ["region US-TX>US-NM"])
    }

    @Test("two confirmations: a single fix across the line announces nothing")
    func confirmations() throws {
        var drive = Drive()
        drive.tracker = DeviceTracker(
            configuration: TrackerConfiguration(placeConfirmations: 2),
            countries: countryIndex,
            places: placeIndex
        )
        #expect(drive.fixes([(41.5934, -87.3464)]) == ["region ->US-IN", "zone ->America/Chicago"])
        #expect(drive.fixes([(41.80, -86.70), (41.62, -87.20)]) == [], "one fix in Michigan, then back")
        #expect(drive.state.places.regionCandidate == nil)
        #expect(
            drive.fixes([(41.80, -86.70), (41.81, -86.69)])
                == ["region US-IN>US-MI", "zone America/Chicago>America/Detroit"]
        )
    }

    @Test("arriving in a country without known regions drops the last country's region")
    func countryWithoutRegions() throws {
        var drive = Drive()
        // Johor Bahru (Malaysia) across the causeway to Woodlands (Singapore, a city-state without regions); both on
        // Singapore's time.
        #expect(drive.fixes([(1.4655, 103.7578)]) == ["region ->MY-01", "zone ->Asia/Kuala_Lumpur"])
        #expect(drive.fixes([(1.4382, 103.7890)]) == ["region MY-01>-", "zone Asia/Kuala_Lumpur>Asia/Singapore"])
        #expect(drive.state.places.region == nil)
    }

    @Test("time-zone events carry each side's UTC offset at the fix's time")
    func offsets() throws {
        var events: [DeviceEvent] = []
        var state = DeviceState(deviceId: "rig-4")
        let tracker = DeviceTracker(countries: countryIndex, places: placeIndex)
        for (offset, longitude) in [(1, -87.3464), (2, -86.70)] {
            let time: Int64 = 1_795_248_000_000 + Int64(offset) * 3_600_000  // November: standard time
            let position = Position(
                deviceId: "rig-4",
                coordinate: Coordinate(latitude: 41.80, longitude: longitude)!,
                timestamp: time,
                accuracy: 10
            )
            let origin = MessageOrigin(topic: "positions", partition: 0, offset: Int64(offset), timestamp: time)
            _ = tracker.apply(position, origin: origin, to: &state, events: &events)
        }
        let change = try #require(
            events.compactMap { event -> TimeZoneChange? in
                if case .timeZoneChanged(let change) = event.payload, change.from != nil { return change }
                return nil
            }.first
        )
        #expect(change.from == TimeZoneChange.Zone(identifier: "America/Chicago", utcOffsetSeconds: -6 * 3600))
        #expect(change.to == TimeZoneChange.Zone(identifier: "America/Detroit", utcOffsetSeconds: -5 * 3600))
    }

    @Test("a country change whose fix straddles a region line carries the region its point lies in")
    func countryChangeOnARegionLine() throws {
        // The Indiana-Michigan line at 86.75° W, found to a centimetre, and a fix 5 m into Michigan with a 50 m disc:
        // it decides the country (Canada is far) but not the region.
        var (south, north) = (41.70, 41.80)
        while north - south > 1e-7 {
            let middle = (south + north) / 2
            let region = placeIndex.region(
                at: Coordinate(latitude: middle, longitude: -86.75)!,
                within: 0,
                countryCode: "US"
            )
            if region.value?.code == "US-IN" { south = middle } else { north = middle }
        }
        let onTheLine = Coordinate(latitude: north + 0.000_045, longitude: -86.75)!
        #expect(placeIndex.region(at: onTheLine, within: 0, countryCode: "US").value?.code == "US-MI")
        #expect(placeIndex.region(at: onTheLine, within: 50, countryCode: "US") == .undecided)
        var events: [DeviceEvent] = []
        var state = DeviceState(deviceId: "van-4")
        let tracker = DeviceTracker(countries: countryIndex, places: placeIndex)
        for (offset, (coordinate, accuracy)) in [
            (Coordinate(latitude: 42.30, longitude: -83.02)!, 10.0), (onTheLine, 50),
        ]
        .enumerated() {
            let time = 1_795_248_000_000 + Int64(offset) * 60_000
            let position = Position(deviceId: "van-4", coordinate: coordinate, timestamp: time, accuracy: accuracy)
            let origin = MessageOrigin(topic: "positions", partition: 0, offset: Int64(offset), timestamp: time)
            _ = tracker.apply(position, origin: origin, to: &state, events: &events)
        }
        let changes = events.compactMap(\.payload.countryChange)
        #expect(changes.map(\.to) == ["CA", "US"])
        #expect(changes.last?.region?.code == "US-MI")
    }

    @Test("a country change carries the region and locality of its fix; event kinds can be switched off")
    func countryChangeAndSwitches() throws {
        var events: [DeviceEvent] = []
        var state = DeviceState(deviceId: "van-3")
        let tracker = DeviceTracker(
            configuration: TrackerConfiguration(disabledEventTypes: ["timezone.changed"]),
            countries: countryIndex,
            places: placeIndex
        )
        let position = Position(
            deviceId: "van-3",
            coordinate: Coordinate(latitude: 48.5735, longitude: 7.8150)!,
            timestamp: 1_795_248_000_000,
            accuracy: 10
        )
        let origin = MessageOrigin(topic: "positions", partition: 3, offset: 7, timestamp: 1_795_248_000_000)
        _ = tracker.apply(position, origin: origin, to: &state, events: &events)
        #expect(events.map(\.type) == ["country.changed", "region.changed"])
        let change = try #require(events.first?.payload.countryChange)
        #expect(change.region?.code == "DE-BW")
        #expect(change.locality?.name == "Kehl")
        // The switched-off event was numbered all the same: the others keep their ids.
        #expect(events.map(\.id) == ["positions:3:7:0", "positions:3:7:1"])
        #expect(state.places.timeZone == "Europe/Berlin", "the state follows a switched-off kind")
    }
}

extension DeviceEvent.Payload {
    /// The country change, nil for any other event: for `try #require` and `compactMap`.
    var countryChange: CountryChange? {
        if case .countryChanged(let change) = self { return change }
        return nil
    }
}
