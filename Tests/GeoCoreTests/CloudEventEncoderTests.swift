import Foundation
import GeoCore
import Testing

@Suite("Encoding events as CloudEvents", .timeLimit(.minutes(5)))
struct CloudEventEncoderTests {
    static let fix = Fix(
        coordinate: Coordinate(latitude: 50.8466, longitude: 4.3528)!,
        timestamp: TimestampTests.tenOClock,
        accuracy: 12
    )

    func encodeAndParse(_ event: DeviceEvent) throws -> [String: Any] {
        let bytes = CloudEventEncoder().encode(event)
        let object = try JSONSerialization.jsonObject(with: Data(bytes))
        return try #require(object as? [String: Any])
    }

    @Test("geofence events carry the CloudEvents attributes and the pin as tracked")
    func geofenceEvent() throws {
        let pin = try #require(
            Pin(
                id: "exit-23",
                center: Coordinate(latitude: 50.85, longitude: 4.35)!,
                radius: 200,
                title: "Exit \"23\"\nnorth ✓",
                metadataJSON: #"{"roadNumber":"E40","lanes":[1,2]}"#
            )
        )
        let crossing = GeofenceCrossing(pin: pin, position: Self.fix, distanceMeters: 123.456_789, initial: true)
        let event = DeviceEvent(
            id: "positions:3:1042:0",
            deviceId: "truck-17",
            time: TimestampTests.tenOClock,
            payload: .geofenceEntered(crossing)
        )
        let json = try encodeAndParse(event)
        #expect(json["specversion"] as? String == "1.0")
        #expect(json["id"] as? String == "positions:3:1042:0")
        #expect(json["source"] as? String == "/geoworker")
        #expect(json["type"] as? String == "geofence.entered")
        #expect(json["subject"] as? String == "truck-17")
        #expect(json["time"] as? String == "2026-11-21T10:00:00.000Z")
        #expect(json["datacontenttype"] as? String == "application/json")
        let data = try #require(json["data"] as? [String: Any])
        #expect(data["deviceId"] as? String == "truck-17")
        #expect(data["initial"] as? Bool == true)
        #expect(data["distanceMeters"] as? Double == 123.46)
        let pinJSON = try #require(data["pin"] as? [String: Any])
        #expect(pinJSON["id"] as? String == "exit-23")
        #expect(pinJSON["title"] as? String == "Exit \"23\"\nnorth ✓")
        #expect(pinJSON["radius"] as? Double == 200)
        let metadata = try #require(pinJSON["metadata"] as? [String: Any])
        #expect(metadata["roadNumber"] as? String == "E40")
        #expect(metadata["lanes"] as? [Int] == [1, 2])
        let position = try #require(data["position"] as? [String: Any])
        #expect(position["lat"] as? Double == 50.8466)
        #expect(position["lon"] as? Double == 4.3528)
        #expect(position["timestamp"] as? String == "2026-11-21T10:00:00.000Z")
        #expect(position["accuracy"] as? Double == 12)
    }

    @Test("dwelled, crossed and approaching: a polygon pin by its box, the times and figures each event adds")
    func fleetEvents() throws {
        let shape = try PolygonShape(
            polygons: [[[[4.3, 50.8], [4.4, 50.8], [4.4, 50.9], [4.3, 50.8]]]],
            isMulti: false
        )
        let depot = try #require(Pin(id: "depot", shape: .polygon(shape), title: "Depot", dwellSeconds: 300))
        func event(_ payload: DeviceEvent.Payload) -> DeviceEvent {
            DeviceEvent(id: "positions:0:1:0", deviceId: "van-1", time: TimestampTests.tenOClock, payload: payload)
        }
        let dwell = try encodeAndParse(
            event(
                .geofenceDwelled(
                    GeofenceDwell(
                        pin: depot,
                        position: Self.fix,
                        insideSince: TimestampTests.tenOClock - 305_500,
                        dwellSeconds: 305.5
                    )
                )
            )
        )
        #expect(dwell["type"] as? String == "geofence.dwelled")
        let dwellData = try #require(dwell["data"] as? [String: Any])
        #expect(dwellData["insideSince"] as? String == "2026-11-21T09:54:54.500Z")
        #expect(dwellData["dwellSeconds"] as? Double == 305.5)
        let pin = try #require(dwellData["pin"] as? [String: Any])
        #expect(pin["kind"] as? String == "polygon")
        #expect(pin["bbox"] as? [Double] == [4.3, 50.8, 4.4, 50.9])
        #expect(pin["vertices"] as? Int == 3)
        #expect(pin["dwellSeconds"] as? Int == 300)
        #expect(pin["lat"] == nil && pin["radius"] == nil)

        let later = Fix(
            coordinate: Coordinate(latitude: 50.9, longitude: 4.5)!,
            timestamp: TimestampTests.tenOClock,
            accuracy: nil
        )
        let crossed = try encodeAndParse(
            event(.geofenceCrossed(GeofencePassage(pin: depot, from: Self.fix, to: later)))
        )
        let crossedData = try #require(crossed["data"] as? [String: Any])
        #expect((crossedData["from"] as? [String: Any])?["accuracy"] as? Double == 12)
        #expect((crossedData["to"] as? [String: Any])?["lon"] as? Double == 4.5)

        let gate = try #require(
            Pin(id: "gate", center: Coordinate(latitude: 50.85, longitude: 4.35)!, radius: 200, approachSeconds: 120)
        )
        let approaching = try encodeAndParse(
            event(
                .geofenceApproaching(
                    GeofenceApproach(
                        pin: gate,
                        position: Self.fix,
                        etaSeconds: 61.234,
                        distanceMeters: 1_350.126,
                        speedMetersPerSecond: 22.049,
                        basis: .derivedSpeed
                    )
                )
            )
        )
        let approachData = try #require(approaching["data"] as? [String: Any])
        #expect(approachData["etaSeconds"] as? Double == 61.2)
        #expect(approachData["distanceMeters"] as? Double == 1_350.13)
        #expect(approachData["speedMetersPerSecond"] as? Double == 22.05)
        #expect(approachData["basis"] as? String == "derived-speed")
        #expect((approachData["pin"] as? [String: Any])?["kind"] as? String == "circle")
        #expect((approachData["pin"] as? [String: Any])?["approachSeconds"] as? Int == 120)
    }

    @Test("country.changed has from null for the first fix; language.suggested has its basis")
    func countryAndLanguage() throws {
        let change = DeviceEvent(
            id: "positions:0:1:0",
            deviceId: "truck-17",
            time: TimestampTests.tenOClock,
            payload: .countryChanged(CountryChange(from: nil, to: "BE", countryName: "Belgium", position: Self.fix))
        )
        let changeData = try #require(try encodeAndParse(change)["data"] as? [String: Any])
        #expect(changeData["from"] is NSNull)
        #expect(changeData["to"] as? String == "BE")
        #expect(changeData["countryName"] as? String == "Belgium")

        let suggestion = DeviceEvent(
            id: "positions:0:1:1",
            deviceId: "truck-17",
            time: TimestampTests.tenOClock,
            payload: .languageSuggested(
                LanguageSuggestion(
                    countryCode: "BE",
                    language: "fr-BE",
                    alternatives: ["nl-BE", "de-BE"],
                    basis: .deviceLanguage
                )
            )
        )
        let json = try encodeAndParse(suggestion)
        #expect(json["type"] as? String == "language.suggested")
        let data = try #require(json["data"] as? [String: Any])
        #expect(data["language"] as? String == "fr-BE")
        #expect(data["alternatives"] as? [String] == ["nl-BE", "de-BE"])
        #expect(data["basis"] as? String == "device-language")
    }

    @Test("trip.started, trip.ended, speed.exceeded and speed.normal: where, when, how far and how fast")
    func tripsAndSpeed() throws {
        let start = Fix(
            coordinate: Coordinate(latitude: 50.5, longitude: 4.5)!,
            timestamp: TimestampTests.tenOClock,
            accuracy: 6
        )
        let end = Self.fix
        let ended = try encodeAndParse(
            DeviceEvent(
                id: "positions:0:9:0",
                deviceId: "truck-17",
                time: end.timestamp,
                payload: .tripEnded(
                    TripEnd(
                        start: start,
                        end: end,
                        distanceMeters: 12_345.678,
                        topSpeedMetersPerSecond: 27.456,
                        reason: .parked,
                        position: end
                    )
                )
            )
        )
        #expect(ended["type"] as? String == "trip.ended")
        let trip = try #require(ended["data"] as? [String: Any])
        #expect(trip["distanceMeters"] as? Double == 12_345.7)
        #expect(trip["topSpeedMetersPerSecond"] as? Double == 27.46)
        #expect(trip["reason"] as? String == "parked")
        #expect((trip["start"] as? [String: Any])?["lat"] as? Double == 50.5)
        #expect(trip["durationSeconds"] as? Double == Double(end.timestamp - start.timestamp) / 1000)
        let started = try encodeAndParse(
            DeviceEvent(
                id: "positions:0:5:0",
                deviceId: "truck-17",
                time: end.timestamp,
                payload: .tripStarted(TripStart(start: start, position: end, distanceMeters: 512.04))
            )
        )
        #expect(started["type"] as? String == "trip.started")
        #expect((started["data"] as? [String: Any])?["distanceMeters"] as? Double == 512)
        let report = SpeedReport(
            limitMetersPerSecond: 25,
            speedMetersPerSecond: 31.234,
            basis: .derivedSpeed,
            topSpeedMetersPerSecond: 33,
            since: end.timestamp - 45_000,
            position: end
        )
        for (payload, type) in [
            (DeviceEvent.Payload.speedExceeded(report), "speed.exceeded"), (.speedNormal(report), "speed.normal"),
        ] {
            let json = try encodeAndParse(
                DeviceEvent(id: "positions:0:7:0", deviceId: "truck-17", time: end.timestamp, payload: payload)
            )
            #expect(json["type"] as? String == type)
            let data = try #require(json["data"] as? [String: Any])
            #expect(data["limitMetersPerSecond"] as? Double == 25)
            #expect(data["speedMetersPerSecond"] as? Double == 31.23)
            #expect(data["basis"] as? String == "derived-speed")
            #expect(data["durationSeconds"] as? Double == 45)
            #expect(data["since"] is String)
        }
    }

    @Test("device.silent and device.resumed: the last fix, the threshold, how long it was quiet")
    func silence() throws {
        let last = Fix(
            coordinate: Coordinate(latitude: 50.5, longitude: 4.5)!,
            timestamp: Self.fix.timestamp - 1_500_000,
            accuracy: 6
        )
        let silent = try encodeAndParse(
            DeviceEvent(
                id: "device.silent:truck-17:\(last.timestamp)",
                deviceId: "truck-17",
                time: last.timestamp + 900_000,
                payload: .deviceSilent(DeviceSilence(lastFix: last, silentAfterSeconds: 900))
            )
        )
        #expect(silent["type"] as? String == "device.silent")
        #expect((silent["data"] as? [String: Any])?["silentAfterSeconds"] as? Int == 900)
        let resumed = try encodeAndParse(
            DeviceEvent(
                id: "positions:0:9:0",
                deviceId: "truck-17",
                time: Self.fix.timestamp,
                payload: .deviceResumed(DeviceResumption(lastFix: last, position: Self.fix))
            )
        )
        #expect(resumed["type"] as? String == "device.resumed")
        #expect((resumed["data"] as? [String: Any])?["quietSeconds"] as? Double == 1_500)
    }

    @Test("events appended one after another to a buffer: each is the same JSON as alone, long ones included")
    func appendedAfterEachOther() throws {
        // The worker appends each event to the buffer that holds the events before it; the writer keeps room at
        // the buffer's end and grows it for tokens longer than that room (a pin's metadata of several kilobytes).
        let longMetadata = "{\"notes\":\"" + String(repeating: "lane closed; ", count: 400) + "\"}"
        let longTitle = String(repeating: "Exit \"23\"\t", count: 300)
        var events: [DeviceEvent] = []
        for index in 0..<40 {
            let pin = try #require(
                Pin(
                    id: "pin-\(index)",
                    center: Coordinate(latitude: 50.85 + Double(index) * 0.001_1, longitude: 4.35)!,
                    radius: 200,
                    title: index % 3 == 1 ? longTitle : "pin \(index)",
                    metadataJSON: index % 4 == 2 ? longMetadata : nil
                )
            )
            let crossing = GeofenceCrossing(pin: pin, position: Self.fix, distanceMeters: 12.5, initial: false)
            events.append(
                DeviceEvent(
                    id: "positions:0:\(index):0",
                    deviceId: "truck-\(index)",
                    time: TimestampTests.tenOClock + Int64(index),
                    payload: index.isMultiple(of: 2) ? .geofenceEntered(crossing) : .geofenceExited(crossing)
                )
            )
        }
        let encoder = CloudEventEncoder()
        var buffer = Array("earlier records".utf8)
        var expected = buffer
        for event in events {
            encoder.append(event, to: &buffer)
            expected += encoder.encode(event)
        }
        #expect(buffer == expected)
        #expect(buffer.count > 40 * 500 + 10 * 5_000)
        // The tenth has both: parsed back, whole.
        let tenth = try #require(
            JSONSerialization.jsonObject(with: Data(encoder.encode(events[10]))) as? [String: Any]
        )
        let pin = try #require((tenth["data"] as? [String: Any])?["pin"] as? [String: Any])
        #expect(pin["title"] as? String == longTitle)
        let notes = (pin["metadata"] as? [String: Any])?["notes"] as? String
        #expect(notes == String(repeating: "lane closed; ", count: 400))
    }

    @Test("control characters in strings are escaped so the output stays valid JSON")
    func escaping() throws {
        let event = DeviceEvent(
            id: "t:0:0:0",
            deviceId: "a\u{0}b\u{1F}c\\d\"e",
            time: 0,
            payload: .countryChanged(CountryChange(from: "AA", to: "BB", countryName: "B\tB", position: Self.fix))
        )
        let json = try encodeAndParse(event)
        #expect(json["subject"] as? String == "a\u{0}b\u{1F}c\\d\"e")
        // The source is the operator's: written once into the envelope's fixed text, escaped there too.
        let source = "/geo\"worker\\\u{1}"
        let custom = try #require(
            try JSONSerialization.jsonObject(with: Data(CloudEventEncoder(source: source).encode(event)))
                as? [String: Any]
        )
        #expect(custom["source"] as? String == source)
        #expect(custom["type"] as? String == "country.changed")
        #expect(custom["id"] as? String == "t:0:0:0")
    }
}

@Suite("Event ids", .timeLimit(.minutes(5)))
struct EventIDTests {
    @Test(
        "an event's id is topic:partition:offset:index, every number in full",
        arguments: [
            (MessageOrigin(topic: "positions", partition: 3, offset: 1042, timestamp: 0), 0, "positions:3:1042:0"),
            (MessageOrigin(topic: "p", partition: 0, offset: 0, timestamp: 0), 12, "p:0:0:12"),
            (
                MessageOrigin(topic: "fleet.positions-v2", partition: 2_147_483_647, offset: .max, timestamp: 0), 1_000,
                "fleet.positions-v2:2147483647:9223372036854775807:1000"
            ),
            (MessageOrigin(topic: "positions", partition: 10, offset: 100, timestamp: 0), 109, "positions:10:100:109"),
        ]
    )
    func ids(origin: MessageOrigin, index: Int, expected: String) {
        #expect(origin.eventId(index) == expected)
    }
}

@Suite("Topic names", .timeLimit(.minutes(5)))
struct TopicNameTests {
    @Test("a topic's name is kept once: the same name from any thread is one value, other names differ")
    func interned() async {
        let names = ["device-positions", "device-commands", "p", "", "fleet.positions-v2-with-a-long-name"]
        // Made concurrently, as the loop and the tests of several suites may.
        let made = await withTaskGroup(of: [TopicName].self) { group in
            for _ in 0..<8 { group.addTask { names.map(TopicName.init) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for round in made {
            #expect(round == made[0])
            #expect(round.map(\.hashValue) == made[0].map(\.hashValue))
            #expect(round.map(\.description) == names)
        }
        #expect(Set(made[0]).count == names.count)
        let origin = MessageOrigin(topic: "device-positions", partition: 1, offset: 7, timestamp: 0)
        #expect(origin.topicName == TopicName("device-positions") && origin.topic == "device-positions")
        #expect(origin == MessageOrigin(topic: TopicName("device-positions"), partition: 1, offset: 7, timestamp: 0))
    }
}
