import GeoCore
import JSONCodec
import TestSupport
import Testing

func decodeCommand(_ text: String) -> Result<DeviceCommand, DecodingFailure> {
    Array(text.utf8).withUnsafeBytes { DeviceCommand.decode(json: $0) }
}

@Suite("Decoding commands", .timeLimit(.minutes(5)))
struct CommandDecodingTests {
    @Test("track with every field, metadata kept as its JSON text")
    func track() throws {
        let text = #"""
            {"type":"track","deviceId":"truck-17","pin":{"id":"exit-23-north","lat":50.85,"lon":4.35,"radius":200,
             "title":"Exit 23","metadata":{"roadNumber":"E40", "direction":"north","lanes":[1,2]}}}
            """#
        let (deviceId, pin) = try #require(try decodeCommand(text).get().trackedPin)
        #expect(deviceId == "truck-17")
        #expect(pin.id == "exit-23-north")
        #expect(pin.shape == .circle(center: Coordinate(latitude: 50.85, longitude: 4.35)!, radius: 200))
        #expect(pin.title == "Exit 23")
        #expect(pin.metadataJSON == #"{"roadNumber":"E40", "direction":"north","lanes":[1,2]}"#)
    }

    /// A track command whose pin has this `shape`.
    static func shaped(_ shape: String) -> String {
        #"{"type":"track","deviceId":"d","pin":{"id":"p","shape":"# + shape + "}}"
    }

    @Test("a polygon pin: GeoJSON Polygon with a hole, members in any order, bbox and altitude ignored")
    func polygon() throws {
        let text = #"""
            {"type":"track","deviceId":"van-1","pin":{"id":"depot","dwellSeconds":300,"shape":{"bbox":[0,0,2,2],
            "coordinates":[[[0,0,12],[2,0,12],[2,2,12],[0,2,12],[0,0,12]],[[0.5,0.5],[0.5,1.5],[1.5,1.5],[0.5,0.5]]],
            "type":"Polygon"},"approachSeconds":90}}
            """#
        let pin = try #require(try decodeCommand(text).get().trackedPin).pin
        let shape = try #require(pin.shape.polygon)
        #expect(shape.vertexCount == 7 && shape.ringEnds == [4, 7] && shape.polygonEnds == [2] && !shape.isMulti)
        #expect(pin.dwellSeconds == 300 && pin.approachSeconds == 90)
        #expect(shape.contains(longitude: 0.2, latitude: 0.2) && !shape.contains(longitude: 0.8, latitude: 1.2))
    }

    @Test("members may come in any order, the type last")
    func order() throws {
        let text = #"{"pin":{"radius":50,"lon":4.35,"id":"p","lat":50.85},"deviceId":"d","type":"track"}"#
        let pin = try #require(try decodeCommand(text).get().trackedPin).pin
        #expect(pin.title == nil && pin.metadataJSON == nil)
        #expect(pin.shape == .circle(center: Coordinate(latitude: 50.85, longitude: 4.35)!, radius: 50))
    }

    @Test("untrack and untrackAll")
    func untrack() throws {
        #expect(
            try decodeCommand(#"{"type":"untrack","deviceId":"d","pinId":"p"}"#).get()
                == .untrack(deviceId: "d", pinId: "p")
        )
        #expect(try decodeCommand(#"{"type":"untrackAll","deviceId":"d"}"#).get() == .untrackAll(deviceId: "d"))
        #expect(
            try decodeCommand(#"{"type":"untrackAll","deviceId":"d","pinId":"ignored"}"#).get()
                == .untrackAll(deviceId: "d")
        )
    }

    @Test("subscribe and unsubscribe: tags sorted and each once; written back as they read")
    func subscriptions() throws {
        let subscribe = try decodeCommand(
            #"{"type":"subscribe","deviceId":"truck-17","tags":["depots","airports","depots"]}"#
        )
        .get()
        #expect(subscribe == .subscribe(deviceId: "truck-17", tags: ["airports", "depots"]))
        #expect(try decodeCommand(String(decoding: subscribe.json, as: UTF8.self)).get() == subscribe)
        let unsubscribe = try decodeCommand(#"{"tags":["depots"],"deviceId":"d","type":"unsubscribe"}"#).get()
        #expect(unsubscribe == .unsubscribe(deviceId: "d", tags: ["depots"]))
        #expect(try decodeCommand(String(decoding: unsubscribe.json, as: UTF8.self)).get() == unsubscribe)
        for bad in [
            #"{"type":"subscribe","deviceId":"d"}"#, #"{"type":"subscribe","deviceId":"d","tags":[]}"#,
            #"{"type":"subscribe","deviceId":"d","tags":"depots"}"#,
            #"{"type":"unsubscribe","deviceId":"d","tags":[""]}"#,
            #"{"type":"subscribe","deviceId":"d","tags":[1]}"#,
        ] {
            let failure = try #require(throws: DecodingFailure.self, "\(bad)") { try decodeCommand(bad).get() }
            #expect(failure.description.contains("tags"), "\(bad): \(failure)")
        }
    }

    @Test("setLimits: a device's own speed limit and silence threshold, each left out for the default")
    func limits() throws {
        let both = try decodeCommand(
            #"{"type":"setLimits","deviceId":"truck-17","speedLimit":25,"silenceSeconds":900}"#
        )
        .get()
        #expect(both == .setLimits(deviceId: "truck-17", speedLimit: 25, silentAfterSeconds: 900))
        #expect(try decodeCommand(String(decoding: both.json, as: UTF8.self)).get() == both)
        let defaults = try decodeCommand(#"{"type":"setLimits","deviceId":"d","speedLimit":null}"#).get()
        #expect(defaults == .setLimits(deviceId: "d", speedLimit: nil, silentAfterSeconds: nil))
        #expect(try decodeCommand(String(decoding: defaults.json, as: UTF8.self)).get() == defaults)
        for (bad, member) in [
            (#"{"type":"setLimits","deviceId":"d","speedLimit":0}"#, "speedLimit"),
            (#"{"type":"setLimits","deviceId":"d","speedLimit":"fast"}"#, "speedLimit"),
            (#"{"type":"setLimits","deviceId":"d","silenceSeconds":10}"#, "silenceSeconds"),
            (#"{"type":"setLimits","deviceId":"d","silenceSeconds":90.5}"#, "silenceSeconds"),
        ] {
            let failure = try #require(throws: DecodingFailure.self, "\(bad)") { try decodeCommand(bad).get() }
            #expect(failure.description.contains(member), "\(bad): \(failure)")
        }
    }

    @Test(
        "bad commands give a typed failure that says what is wrong",
        arguments: [
            (
                #"{"type":"teleport","deviceId":"d"}"#, DecodingFailure.Reason.unknownCommand,
                "unknown command type 'teleport'"
            ),
            (#"{"deviceId":"d"}"#, .missingField, "type is required"),
            (#"{"type":"track"}"#, .missingField, "deviceId is required"),
            (#"{"type":"track","deviceId":"d"}"#, .missingField, "pin is required"),
            (#"{"type":"track","deviceId":"d","pin":"p"}"#, .invalidField, "pin must be an object"),
            (
                #"{"type":"track","deviceId":"d","pin":{"lat":1,"lon":2,"radius":10}}"#, .missingField,
                "pin.id is required"
            ),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":1,"lon":2,"radius":0.5}}"#, .invalidField,
                "pin.radius must be a number from 1 to 100000"
            ),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":91,"lon":2,"radius":10}}"#, .invalidField,
                "pin.lat"
            ),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":1,"lon":2,"radius":10,"metadata":[1]}}"#,
                .invalidField, "pin.metadata must be an object"
            ),
            (#"{"type":"untrack","deviceId":"d"}"#, .missingField, "pinId is required"),
            (#"{"type":"untrack","deviceId":"d","pinId":""}"#, .invalidField, "pinId must not be empty"),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":1,"lon":2,"radius":10}"#, .invalidJSON,
                "not valid JSON"
            ),
            ("[]", .notAnObject, "a command must be a JSON object"),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#), .invalidField,
                "ring 0 is not closed"
            ),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}"#), .invalidField,
                "ring 0 has 3 positions"
            ),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,91],[0,0]]]}"#), .invalidField,
                "ring 0 position 2 [1.0, 91.0] is out of range"
            ),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[179,0],[-179,0],[-179,1],[179,0]]]}"#), .invalidField,
                "crosses the antimeridian"
            ),
            (
                shaped(#"{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[5,5],[6,5],[5,5]]]]}"#),
                .invalidField, "polygon 1 ring 0 has 3 positions"
            ),
            (shaped(#"{"type":"Point","coordinates":[0,0]}"#), .invalidField, "must be a Polygon or MultiPolygon"),
            (shaped(#"{"type":"Polygon","coordinates":[[0,0]]}"#), .invalidField, "rings of [lon, lat] positions"),
            // A position is two numbers, or three with an altitude: nothing else.
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1,0,0,0],[1,1],[0,0]]]}"#), .invalidField,
                "rings of [lon, lat] positions"
            ),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1],[1,1],[0,0]]]}"#), .invalidField,
                "rings of [lon, lat] positions"
            ),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1,0,"m"],[1,1],[0,0]]]}"#), .invalidField,
                "rings of [lon, lat] positions"
            ),
            (
                shaped(#"{"type":"Polygon","coordinates":[[[0,0],[1,[0]],[1,1],[0,0]]]}"#), .invalidField,
                "rings of [lon, lat] positions"
            ),
            (shaped(#"{"coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#), .invalidField, "needs a type"),
            (shaped(#""POLYGON((0 0,1 0,1 1,0 0))""#), .invalidField, "pin.shape must be a GeoJSON Polygon"),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":1,"lon":2,"radius":10,"shape":"#
                    + #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}}"#,
                .invalidField, "has a shape and a centre or radius"
            ),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":1,"lon":2,"radius":10,"dwellSeconds":0}}"#,
                .invalidField, "pin.dwellSeconds must be a whole number from 1 to 604800"
            ),
            (
                #"{"type":"track","deviceId":"d","pin":{"id":"p","lat":1,"lon":2,"radius":10,"approachSeconds":1.5}}"#,
                .invalidField, "pin.approachSeconds must be a whole number from 1 to 86400"
            ),
        ]
    )
    func failures(text: String, reason: DecodingFailure.Reason, mentions: String) throws {
        let result = decodeCommand(text)
        let failure = try #require(result.failureValue, "decoded \(result) from \(text)")
        #expect(failure.reason == reason, "\(failure)")
        #expect(failure.description.contains(mentions), "\(failure.description)")
    }

    @Test(
        "a command written as JSON reads back as the same command (quotes and unicode in strings included)",
        arguments: [
            DeviceCommand.track(
                deviceId: "truck \"17\" é",
                pin: Pin(
                    id: "exit-23/north",
                    center: Coordinate(latitude: -33.9, longitude: 151.2)!,
                    radius: 250.5,
                    title: "Exit\n23",
                    metadataJSON: #"{"road":"E40","lanes":[1,2]}"#
                )!
            ),
            DeviceCommand.track(
                deviceId: "d",
                pin: Pin(id: "p", center: Coordinate(latitude: 0, longitude: 0)!, radius: 1)!
            ),
            DeviceCommand.track(
                deviceId: "d",
                pin: Pin(
                    id: "depot",
                    shape: .polygon(
                        try! PolygonShape(
                            polygons: [
                                [
                                    [[4.3, 50.8], [4.4, 50.8], [4.4, 50.9], [4.3, 50.8]],
                                    [[4.36, 50.82], [4.37, 50.82], [4.38, 50.83], [4.36, 50.82]],
                                ]
                            ],
                            isMulti: false
                        )
                    ),
                    dwellSeconds: 600,
                    approachSeconds: 120
                )!
            ),
            DeviceCommand.track(
                deviceId: "d",
                pin: Pin(
                    id: "yards",
                    shape: .polygon(
                        try! PolygonShape(polygons: [[[[0, 0], [1, 0], [1, 1], [0, 0]]]], isMulti: true)
                    )
                )!
            ),
            DeviceCommand.untrack(deviceId: "d", pinId: "p"),
            DeviceCommand.untrackAll(deviceId: "d"),
        ]
    )
    func roundTrip(command: DeviceCommand) throws {
        let decoded = command.json.withUnsafeBytes { DeviceCommand.decode(json: $0) }
        #expect(try decoded.get() == command)
    }
}
