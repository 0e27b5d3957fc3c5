import GeoCore
import TestSupport
import Testing

@Suite("DeviceStateEncoding", .timeLimit(.minutes(5)))
struct DeviceStateEncodingTests {
    @Test("every state comes back as it was, field for field, from its bytes")
    func roundTrip() throws {
        var random = SplitMix64(seed: 15)
        for _ in 0..<2_000 {
            let state = Self.randomState(&random)
            let bytes = DeviceStateEncoding.encode(state)
            #expect(try DeviceStateEncoding.decode(bytes) == state)
        }
    }

    @Test("a device with three pins takes under 200 bytes")
    func compact() {
        var state = DeviceState(deviceId: "truck-000017", languages: ["fr-BE", "en"], country: "BE")
        state.lastFix = Fix(
            coordinate: Coordinate(latitude: 50.85, longitude: 4.35)!,
            timestamp: 1_795_000_000_000,
            accuracy: 12
        )
        state.appliedOffsets = AppliedOffsets(positions: 1_234_567, commands: 89)
        for index in 0..<3 {
            let pin = Pin(id: "pin-\(index)", center: Coordinate(latitude: 50, longitude: 4)!, radius: 200)!
            state.pins.append(TrackedPin(pin: pin, membership: .outside))
        }
        let size = DeviceStateEncoding.encode(state).count
        #expect(size < 200, "\(size) bytes")
    }

    @Test("bytes cut short anywhere give an error, never a state")
    func truncated() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<50 {
            let bytes = DeviceStateEncoding.encode(Self.randomState(&random))
            for length in 0..<bytes.count {
                #expect(throws: DeviceStateDecodingError.self) {
                    try DeviceStateEncoding.decode(Array(bytes[..<length]))
                }
            }
        }
    }

    @Test("a newer version is named as such; trailing bytes, unknown flags and states are refused")
    func refused() throws {
        var bytes = DeviceStateEncoding.encode(DeviceState(deviceId: "d", pins: [TrackedPin(pin: Self.pin)]))
        var newer = bytes
        newer[0] = DeviceStateEncoding.version + 1
        let error = #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(newer) }
        #expect(error?.description.contains("newer geoworker") == true, "\(String(describing: error))")

        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(bytes + [0]) }

        // The pin's state byte follows its id ("p": length and byte) and its flags; a state with no places ends
        // with three bytes (their flags and two fix counts).
        var membership = bytes
        let stateIndex = DeviceStateEncoding.encode(DeviceState(deviceId: "d")).count - 3 + 3
        #expect(membership[stateIndex] == Membership.undetermined.rawValue)
        membership[stateIndex] = 3
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(membership) }

        // One encoding per value: a varint with a needless zero byte is refused (a restore stores the bytes as
        // they come, so two encodings of one state would differ on disk).
        let plain = DeviceStateEncoding.encode(DeviceState(deviceId: "d", inputPartition: 3))
        var padded = plain
        padded.replaceSubrange(3...3, with: [0x83, 0x00])
        let padding = #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(padded) }
        #expect(padding?.description.contains("not minimal") == true, "\(String(describing: padding))")

        // A count far beyond the bytes left is refused before anything is allocated for it.
        bytes = [DeviceStateEncoding.version, 1, UInt8(ascii: "d"), 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        let count = #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(bytes) }
        #expect(count?.description.contains("cannot fit") == true, "\(String(describing: count))")
    }

    @Test("version 1 bytes (circles, no per-pin times) still decode, and are written back as the current version")
    func versionOne() throws {
        // The `full` seed of Fuzz/corpus/device-state, as geoworker 58fcfbb wrote it.
        let hex =
            "0108747275636b2d3137039208080fcdcccccccc6c49406666666666661140f6f9b2e5bd680000000000002940024245024e4c01"
            + "020566722d424502656e0207657869742d3233cdcccccccc6c4940666666666666114000000000000069400301094578697420"
            + "223233220e7b22726f6164223a22453430227d016d3333333333f340c06666666666e66240000000000000f03f0002"
        var bytes: [UInt8] = []
        var digits = hex.utf8.makeIterator()
        while let high = digits.next(), let low = digits.next() {
            bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
        }
        let state = try DeviceStateEncoding.decode(bytes)
        #expect(state.deviceId == "truck-17")
        #expect(state.pins.map(\.pin.id) == ["exit-23", "m"])
        #expect(state.pins[0].pin.shape == .circle(center: Coordinate(latitude: 50.85, longitude: 4.35)!, radius: 200))
        #expect(state.pins[0].pin.title == #"Exit "23""#)
        #expect(state.pins[0].membership == .inside)
        #expect(state.pins[0].since == nil && !state.pins[0].dwellAnnounced && !state.pins[0].approachAnnounced)
        #expect(state.pins[1].membership == .outside)
        let written = DeviceStateEncoding.encode(state)
        #expect(written[0] == DeviceStateEncoding.versionWithoutCatalog)
        #expect(try DeviceStateEncoding.decode(written) == state)
    }

    @Test("version 2 bytes (no approach arrival) still decode; an arrival bit in them is refused")
    func versionTwo() throws {
        let tracked = TrackedPin(pin: Self.pin, membership: .outside, since: 1_000, approachAnnounced: true)
        let state = DeviceState(deviceId: "d", pins: [tracked])
        var bytes = DeviceStateEncoding.encode(state)
        #expect(bytes[0] == DeviceStateEncoding.versionWithoutCatalog)
        // Version 3 is version 4 (and 5) without places: the three bytes of none.
        bytes.removeLast(3)
        bytes[0] = 3
        #expect(try DeviceStateEncoding.decode(bytes) == state, "version 3 is version 4 without places")
        bytes[0] = 2
        #expect(try DeviceStateEncoding.decode(bytes) == state, "version 2 is version 3 without arrivals")

        var arriving = state
        arriving.pins[0].approachArrival = 61_000
        var withArrival = DeviceStateEncoding.encode(arriving)
        #expect(try DeviceStateEncoding.decode(withArrival) == arriving)
        withArrival.removeLast(3)
        withArrival[0] = 2
        #expect(throws: DeviceStateDecodingError.self, "version 2 never wrote an arrival") {
            try DeviceStateEncoding.decode(withArrival)
        }
    }

    @Test("a device's places (region with its source, time zone, pending changes) come back whole")
    func places() throws {
        let places = DevicePlaces(
            region: PlaceRegion(code: "US-IN", name: "Indiana", source: .polygon),
            regionCandidate: "US-MI",
            regionCandidateFixes: 1,
            timeZone: "America/Chicago",
            timeZoneCandidate: nil,
            timeZoneCandidateFixes: 0
        )
        let state = DeviceState(deviceId: "rig-4", places: places)
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(state)) == state)
        var nearest = state
        nearest.places.region = PlaceRegion(code: "DE-BW", name: "Baden-Württemberg", source: .nearestPlace)
        nearest.places.timeZoneCandidate = "Europe/Paris"
        nearest.places.timeZoneCandidateFixes = 2
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(nearest)) == nearest)
        var named = state
        named.places.region = PlaceRegion(code: "DE-BY", name: "Bavaria", localName: "Bayern", source: .polygon)
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(named)) == named)
        var geonames = state
        geonames.places.region = PlaceRegion(code: "FO.ST", name: "Streymoy", source: .geonamesAdmin1)
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(geonames)) == geonames)
        // An unknown places flag or region source is refused.
        var bytes = DeviceStateEncoding.encode(DeviceState(deviceId: "d"))
        bytes[bytes.count - 3] = 16
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(bytes) }
    }

    @Test(
        "catalog standing (subscriptions, last decision, visits) is written as version 6, and only for a device that has it"
    )
    func catalogStanding() throws {
        var state = DeviceState(deviceId: "truck-17", pins: [TrackedPin(pin: Self.pin)])
        let withoutCatalog = DeviceStateEncoding.encode(state)
        #expect(withoutCatalog[0] == 5, "a device without catalog state stays readable by a geoworker of before it")
        state.catalog = CatalogVisits(
            subscriptions: ["depots", "airports"],
            visits: [
                "depot-9": GeofenceStanding(membership: .inside, since: 1_000, dwellAnnounced: true),
                "depot-2": GeofenceStanding(
                    membership: .outside,
                    since: 900,
                    approachAnnounced: true,
                    approachArrival: 1_600
                ),
                "airport-1": GeofenceStanding(membership: .undetermined),
            ],
            decidedAt: 1_000
        )
        let bytes = DeviceStateEncoding.encode(state)
        #expect(bytes[0] == 6)
        #expect(Array(bytes.prefix(withoutCatalog.count).dropFirst()) == Array(withoutCatalog.dropFirst()))
        let decoded = try DeviceStateEncoding.decode(bytes)
        #expect(decoded == state)
        #expect(decoded.catalog?.subscriptions == ["airports", "depots"])
        // One encoding per state: the visits are written by id whatever order the dictionary holds them in.
        for _ in 0..<20 {
            var again = state
            again.catalog = CatalogVisits(
                subscriptions: ["depots", "airports"],
                visits: Dictionary(uniqueKeysWithValues: state.catalog!.visits.shuffled()),
                decidedAt: 1_000
            )
            #expect(DeviceStateEncoding.encode(again) == bytes)
        }
        // An empty standing (subscribed through the default tags only, nothing decided) is still version 6.
        let empty = DeviceState(deviceId: "d", catalog: CatalogVisits())
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(empty)) == empty)
        #expect(DeviceStateEncoding.encode(empty)[0] == 6)
        // Version 5 never carries it: the same bytes as version 5 are refused, having more after the places.
        var relabelled = bytes
        relabelled[0] = 5
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(relabelled) }
    }

    @Test("trips, speeding and a device's own limits are written as version 7, and only for a device that has them")
    func activity() throws {
        var state = DeviceState(deviceId: "truck-17", pins: [TrackedPin(pin: Self.pin)])
        let plain = DeviceStateEncoding.encode(state)
        let start = Fix(coordinate: Coordinate(latitude: 50.1, longitude: 4.2)!, timestamp: 1_000, accuracy: 8)
        let moved = Fix(coordinate: Coordinate(latitude: 50.2, longitude: 4.3)!, timestamp: 9_000, accuracy: nil)
        state.activity = DeviceActivity(
            anchor: moved,
            trip: TripProgress(start: start, lastMove: moved, distanceMeters: 11_400, topSpeed: 31.5, announced: true),
            speeding: SpeedEpisode(since: 8_000, topSpeed: 31.5, announced: false, heading: 41),
            speedLimit: 27.8,
            silentAfterSeconds: 900,
            silenceAnnounced: true
        )
        let bytes = DeviceStateEncoding.encode(state)
        #expect(bytes[0] == 7)
        #expect(Array(bytes.prefix(plain.count).dropFirst()) == Array(plain.dropFirst()), "version 5's fields first")
        #expect(try DeviceStateEncoding.decode(bytes) == state)
        // With a catalog standing too: both sections.
        state.catalog = CatalogVisits(subscriptions: ["depots"])
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(state)) == state)
        // Only a device's own limits: still version 7; none of it left: back to 6 (catalog) or 5.
        state.activity = DeviceActivity(speedLimit: 20)
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(state)) == state)
        state.activity = DeviceActivity()
        #expect(DeviceStateEncoding.encode(state)[0] == 6)
        state.catalog = nil
        #expect(DeviceStateEncoding.encode(state) == plain)
        // An unknown section, or a limit no command sets, is refused.
        var unknown = bytes
        unknown[plain.count] |= 8
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(unknown) }
        var limitless = DeviceState(deviceId: "d", activity: DeviceActivity(speedLimit: 20))
        var limitBytes = DeviceStateEncoding.encode(limitless)
        limitBytes.replaceSubrange((limitBytes.count - 8)..., with: Array(repeating: 0, count: 8))
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(limitBytes) }
        limitless.activity.speedLimit = nil
        #expect(DeviceStateEncoding.encode(limitless)[0] == 5)
    }

    @Test("a device heard later than its fix's time keeps when, as version 8; heard on time, it is written as before")
    func heardLate() throws {
        let place = Coordinate(latitude: 50.1, longitude: 4.2)!
        let fix = Fix(coordinate: place, timestamp: 1_795_000_000_000, accuracy: 8)
        var state = DeviceState(deviceId: "truck-17", lastFix: fix)
        let onTime = DeviceStateEncoding.encode(state)
        #expect(onTime[0] == 5)
        state.lastHeard = fix.timestamp + 3_600_000
        let bytes = DeviceStateEncoding.encode(state)
        #expect(bytes[0] == 8)
        // Version 7 with the section, or 8 without it: no writer does that.
        var seven = bytes
        seven[0] = 7
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(seven) }
        var withActivity = state
        withActivity.lastHeard = nil
        withActivity.activity = DeviceActivity(silentAfterSeconds: 600)
        var eight = DeviceStateEncoding.encode(withActivity)
        #expect(eight[0] == 7)
        eight[0] = 8
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(eight) }
        #expect(try DeviceStateEncoding.decode(bytes) == state)
        state.activity = DeviceActivity(silentAfterSeconds: 600, silenceAnnounced: true)
        state.catalog = CatalogVisits(subscriptions: ["depots"])
        #expect(try DeviceStateEncoding.decode(DeviceStateEncoding.encode(state)) == state, "with the other sections")
        // Heard 0 ms after its fix: no writer does that.
        let zero = Array(bytes.prefix(onTime.count + 1)) + [0]
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(zero) }
        #expect(
            try DeviceStateEncoding.decode(Array(bytes.prefix(onTime.count + 1)) + [1]).lastHeard == fix.timestamp + 1
        )
    }

    @Test("version 4 bytes (a region without its local name) decode with the name as the local name")
    func versionFour() throws {
        let region = PlaceRegion(code: "DE-BY", name: "Bayern", source: .nearestPlace)
        let state = DeviceState(deviceId: "d", places: DevicePlaces(region: region))
        var bytes = DeviceStateEncoding.encode(state)
        // Version 5 ends a region with its local name, empty when it is the name: then the two candidate counts.
        #expect(Array(bytes.suffix(4)) == [1, 0, 0, 0])
        bytes.remove(at: bytes.count - 3)
        bytes[0] = 4
        let decoded = try DeviceStateEncoding.decode(bytes)
        #expect(decoded == state)
        #expect(decoded.places.region?.localName == "Bayern")
        bytes[bytes.count - 3] = 2
        #expect(throws: DeviceStateDecodingError.self, "version 4 had no GeoNames regions") {
            try DeviceStateEncoding.decode(bytes)
        }
    }

    @Test("a polygon pin with holes, dwell, approach and its announced times comes back whole")
    func polygonPin() throws {
        let shape = try PolygonShape(
            polygons: [
                [
                    [[4.0, 50.0], [4.1, 50.0], [4.1, 50.1], [4.0, 50.1], [4.0, 50.0]],
                    [[4.04, 50.04], [4.06, 50.04], [4.06, 50.06], [4.04, 50.04]],
                ],
                [[[5.0, 51.0], [5.1, 51.0], [5.05, 51.1], [5.0, 51.0]]],
            ],
            isMulti: true
        )
        let pin = try #require(
            Pin(id: "depot", shape: .polygon(shape), title: "Depot", dwellSeconds: 300, approachSeconds: 120)
        )
        let tracked = TrackedPin(
            pin: pin,
            membership: .inside,
            since: 1_795_000_000_000,
            dwellAnnounced: true,
            approachAnnounced: true,
            approachArrival: 1_795_000_090_500
        )
        let state = DeviceState(deviceId: "van-1", pins: [tracked])
        let bytes = DeviceStateEncoding.encode(state)
        #expect(try DeviceStateEncoding.decode(bytes) == state)
        #expect(shape.vertexCount == 10)
        // 10 vertices of 16 bytes and a few dozen bytes besides.
        #expect(bytes.count < 10 * 16 + 60, "\(bytes.count) bytes")
    }

    static let pin = Pin(id: "p", center: Coordinate(latitude: 1, longitude: 2)!, radius: 50)!

    static func randomState(_ random: inout SplitMix64) -> DeviceState {
        func text(_ random: inout SplitMix64, _ maximum: Int) -> String {
            let alphabet = Array("abcXYZ-_09éß€🚚 \"\\")
            return String(
                (0..<1 + random.next(below: maximum)).map { _ in alphabet[random.next(below: alphabet.count)] }
            )
        }
        func coordinate(_ random: inout SplitMix64) -> Coordinate {
            Coordinate(latitude: random.uniform(-90, 90), longitude: random.uniform(-180, 180))!
        }
        var state = DeviceState(deviceId: text(&random, 40))
        state.inputPartition = Int32(random.next(below: 3) == 0 ? Int(Int32.max) : random.next(below: 1000))
        state.appliedOffsets = AppliedOffsets(
            positions: random.next(below: 4) == 0 ? -1 : Int64(random.next() >> 2),
            commands: random.next(below: 4) == 0 ? -1 : Int64(random.next(below: 100_000))
        )
        if random.next(below: 5) != 0 {
            state.lastFix = Fix(
                coordinate: coordinate(&random),
                timestamp: Int64(bitPattern: random.next()) >> Int64(random.next(below: 64)),
                accuracy: random.next(below: 2) == 0 ? nil : random.uniform(0, 5_000)
            )
        }
        state.languages = (0..<random.next(below: 4)).map { _ in text(&random, 8) }
        state.country = random.next(below: 3) == 0 ? nil : text(&random, 2)
        state.countryCandidate = random.next(below: 3) == 0 ? text(&random, 2) : nil
        state.countryCandidateFixes = random.next(below: 5)
        for index in 0..<random.next(below: 6) {
            let shape: PinShape
            if random.next(below: 3) == 0 {
                shape = .polygon(randomPolygon(&random))
            } else {
                shape = .circle(center: coordinate(&random), radius: random.uniform(1, 100_000))
            }
            let pin = Pin(
                id: "\(index)-" + text(&random, 20),
                shape: shape,
                title: random.next(below: 2) == 0 ? nil : text(&random, 30),
                metadataJSON: random.next(below: 2) == 0 ? nil : #"{"k":"\#(text(&random, 10))"}"#,
                dwellSeconds: random.next(below: 2) == 0 ? nil : 1 + random.next(below: 604_800),
                approachSeconds: random.next(below: 2) == 0 ? nil : 1 + random.next(below: 86_400)
            )!
            let membership = Membership(rawValue: UInt8(random.next(below: 3)))!
            state.pins.append(
                TrackedPin(
                    pin: pin,
                    membership: membership,
                    since: random.next(below: 2) == 0 ? nil : Int64(bitPattern: random.next()) >> 20,
                    dwellAnnounced: random.next(below: 2) == 0,
                    approachAnnounced: random.next(below: 2) == 0,
                    approachArrival: random.next(below: 2) == 0 ? nil : Int64(bitPattern: random.next()) >> 20
                )
            )
        }
        if random.next(below: 3) == 0 {
            let tags = (0..<random.next(below: 4)).map { _ in text(&random, 12) }
            let visits = (0..<random.next(below: 5)).map { index in
                (
                    "\(index)-" + text(&random, 20),
                    GeofenceStanding(
                        membership: Membership(rawValue: UInt8(random.next(below: 3)))!,
                        since: random.next(below: 2) == 0 ? nil : Int64(bitPattern: random.next()) >> 20,
                        dwellAnnounced: random.next(below: 2) == 0,
                        approachAnnounced: random.next(below: 2) == 0,
                        approachArrival: random.next(below: 2) == 0 ? nil : Int64(bitPattern: random.next()) >> 20
                    )
                )
            }
            state.catalog = CatalogVisits(
                subscriptions: tags,
                visits: Dictionary(visits) { first, _ in first },
                decidedAt: random.next(below: 2) == 0 ? nil : Int64(bitPattern: random.next()) >> 20
            )
        }
        if random.next(below: 3) == 0 {
            func fix(_ random: inout SplitMix64) -> Fix {
                Fix(
                    coordinate: coordinate(&random),
                    timestamp: Int64(bitPattern: random.next()) >> 20,
                    accuracy: random.next(below: 2) == 0 ? nil : random.uniform(0, 500)
                )
            }
            var activity = DeviceActivity()
            if random.next(below: 2) == 0 { activity.anchor = fix(&random) }
            if random.next(below: 2) == 0 {
                activity.trip = TripProgress(
                    start: fix(&random),
                    lastMove: fix(&random),
                    distanceMeters: random.uniform(0, 100_000),
                    topSpeed: random.uniform(0, 80),
                    announced: random.next(below: 2) == 0
                )
            }
            if random.next(below: 2) == 0 {
                activity.speeding = SpeedEpisode(
                    since: Int64(bitPattern: random.next()) >> 20,
                    topSpeed: random.uniform(0, 80),
                    announced: random.next(below: 2) == 0,
                    heading: random.next(below: 2) == 0 ? nil : random.uniform(0, 360)
                )
            }
            if random.next(below: 2) == 0 { activity.speedLimit = random.uniform(0.1, 200) }
            if random.next(below: 2) == 0 { activity.silentAfterSeconds = 60 + random.next(below: 100_000) }
            activity.silenceAnnounced = random.next(below: 2) == 0
            state.activity = activity
        }
        return state
    }

    /// Polygons of rings of 3 to 8 random vertices within a few degrees (shape validity does not matter here).
    static func randomPolygon(_ random: inout SplitMix64) -> PolygonShape {
        let longitude = random.uniform(-170, 170)
        let latitude = random.uniform(-80, 80)
        let polygons = (0..<1 + random.next(below: 2)).map { _ in
            (0..<1 + random.next(below: 3)).map { _ in
                var ring = (0..<3 + random.next(below: 6)).map { _ in
                    [longitude + random.uniform(-5, 5), latitude + random.uniform(-5, 5)]
                }
                ring.append(ring[0])
                return ring
            }
        }
        return try! PolygonShape(polygons: polygons, isMulti: polygons.count > 1 || random.next(below: 2) == 0)
    }
}
