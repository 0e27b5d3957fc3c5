import GeoCore
import Testing

func decodeCommand(_ text: String) -> Result<DeviceCommand, DecodingFailure> {
    Array(text.utf8).withUnsafeBytes { DeviceCommand.decode(json: $0) }
}

@Suite("Decoding commands")
struct CommandDecodingTests {
    @Test("track with every field, metadata kept as its JSON text")
    func track() throws {
        let text = #"""
            {"type":"track","deviceId":"truck-17","pin":{"id":"exit-23-north","lat":50.85,"lon":4.35,"radius":200,
             "title":"Exit 23","metadata":{"roadNumber":"E40", "direction":"north","lanes":[1,2]}}}
            """#
        guard case .track(let deviceId, let pin) = try decodeCommand(text).get() else {
            Issue.record("expected track")
            return
        }
        #expect(deviceId == "truck-17")
        #expect(pin.id == "exit-23-north")
        #expect(pin.shape == .circle(center: Coordinate(latitude: 50.85, longitude: 4.35)!, radius: 200))
        #expect(pin.title == "Exit 23")
        #expect(pin.metadataJSON == #"{"roadNumber":"E40", "direction":"north","lanes":[1,2]}"#)
    }

    @Test("members may come in any order, the type last")
    func order() throws {
        let text = #"{"pin":{"radius":50,"lon":4.35,"id":"p","lat":50.85},"deviceId":"d","type":"track"}"#
        guard case .track(_, let pin) = try decodeCommand(text).get() else {
            Issue.record("expected track")
            return
        }
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
        ]
    )
    func failures(text: String, reason: DecodingFailure.Reason, mentions: String) {
        switch decodeCommand(text) {
        case .success(let command):
            Issue.record("decoded \(command) from \(text)")
        case .failure(let failure):
            #expect(failure.reason == reason, "\(failure)")
            #expect(failure.description.contains(mentions), "\(failure.description)")
        }
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
            DeviceCommand.untrack(deviceId: "d", pinId: "p"),
            DeviceCommand.untrackAll(deviceId: "d"),
        ]
    )
    func roundTrip(command: DeviceCommand) throws {
        let decoded = command.json.withUnsafeBytes { DeviceCommand.decode(json: $0) }
        #expect(try decoded.get() == command)
    }
}
