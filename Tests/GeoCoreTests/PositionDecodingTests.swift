import GeoCore
import JSONCodec
import TestSupport
import Testing

func decodePosition(_ text: String) -> Result<Position, DecodingFailure> {
    Array(text.utf8).withUnsafeBytes { Position.decode(json: $0) }
}

@Suite("Decoding positions", .timeLimit(.minutes(5)))
struct PositionDecodingTests {
    @Test("the documented example decodes with every field")
    func documentedExample() throws {
        let text = #"""
            {"deviceId":"truck-17","lat":50.8466,"lon":4.3528,"timestamp":"2026-11-21T10:00:00Z",
             "accuracy":12.0,"speed":13.4,"heading":270,"languages":["fr-BE","en"]}
            """#
        let position = try decodePosition(text).get()
        #expect(position.deviceId == "truck-17")
        #expect(position.coordinate == Coordinate(latitude: 50.8466, longitude: 4.3528))
        #expect(position.timestamp == TimestampTests.tenOClock)
        #expect(position.accuracy == 12 && position.speed == 13.4 && position.heading == 270)
        #expect(position.languages == ["fr-BE", "en"])
    }

    @Test(
        "any valid JSON layout gives the same position",
        arguments: [
            #"{"deviceId":"truck-17","lat":50.8466,"lon":4.3528,"timestamp":1795255200000}"#,
            #"{"timestamp":1795255200000,"lon":4.3528,"lat":50.8466,"deviceId":"truck-17"}"#,
            "\n{ \"deviceId\" :\t\"truck-17\" ,\r\n \"lat\" : 50.8466 , \"lon\":4.3528,\"timestamp\":1795255200000 }\n",
            #"{"dev\u0069ceId":"truck\u002d17","lat":5.08466e1,"lon":0.43528E+1,"timestamp":1.7952552e12}"#,
            #"{"deviceId":"truck-17","lat":50.8466,"lon":4.3528,"timestamp":"2026-11-21T10:00:00.000Z","accuracy":null,"speed":null,"heading":null,"languages":null}"#,
            #"{"deviceId":"truck-17","extra":{"nested":[1,2,{"x":null}],"s":"\"}"},"lat":50.8466,"lon":4.3528,"timestamp":1795255200000,"more":[true,false]}"#,
            #"{"deviceId":"wrong","lat":0,"lon":0,"timestamp":1,"deviceId":"truck-17","lat":50.8466,"lon":4.3528,"timestamp":1795255200000}"#,
            "\u{FEFF}{\"deviceId\":\"truck-17\",\"lat\":50.8466,\"lon\":4.3528,\"timestamp\":1795255200000}",
        ]
    )
    func layouts(text: String) throws {
        let position = try decodePosition(text).get()
        #expect(
            position
                == Position(
                    deviceId: "truck-17",
                    coordinate: Coordinate(latitude: 50.8466, longitude: 4.3528)!,
                    timestamp: TimestampTests.tenOClock
                )
        )
    }

    @Test("member names match whole: a name one byte longer or shorter, or ending in an escaped NUL, is ignored")
    func nearNames() throws {
        let position = try decodePosition(
            #"{"deviceId":"truck-17","lat":50.8466,"lon":4.3528,"timestamp":1795255200000,"#
                + #""lat\u0000":1,"la":2,"lats":3,"lon\u0000\u0000":4,"deviceIdentifierTooLong":"x","deviceI":"y"}"#
        ).get()
        #expect(position.deviceId == "truck-17")
        #expect(position.coordinate == Coordinate(latitude: 50.8466, longitude: 4.3528))
    }

    @Test("unicode in strings, raw or escaped, survives")
    func unicode() throws {
        let raw = try decodePosition(#"{"deviceId":"trück-😀","lat":0,"lon":0,"timestamp":1795255200000}"#).get()
        let escaped = try decodePosition(
            #"{"deviceId":"tr\u00fcck-\ud83d\ude00","lat":0,"lon":0,"timestamp":1795255200000}"#
        ).get()
        #expect(raw.deviceId == "trück-😀")
        #expect(escaped.deviceId == "trück-😀")
    }

    @Test(
        "bad input gives a typed failure that says what is wrong",
        arguments: [
            ("", DecodingFailure.Reason.invalidJSON, "unexpected end"),
            ("not json", .invalidJSON, "not valid JSON"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,}"#, .invalidJSON, "member name"),
            (#"{"deviceId":"a","lat":01,"lon":2,"timestamp":1795255200000}"#, .invalidJSON, "leading zero"),
            (#"{"deviceId":"a\u","lat":1,"lon":2,"timestamp":1795255200000}"#, .invalidJSON, "\\u escape"),
            (#"{"deviceId":"\ud800","lat":1,"lon":2,"timestamp":1795255200000}"#, .invalidJSON, "surrogate"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000} {}"#, .invalidJSON, "after the JSON value"),
            ("[1,2]", .notAnObject, "must be a JSON object"),
            ("42", .notAnObject, "must be a JSON object"),
            (#"{"lat":1,"lon":2,"timestamp":1795255200000}"#, .missingField, "deviceId is required"),
            (#"{"deviceId":null,"lat":1,"lon":2,"timestamp":1795255200000}"#, .missingField, "deviceId is required"),
            (
                #"{"deviceId":"","lat":1,"lon":2,"timestamp":1795255200000}"#, .invalidField,
                "deviceId must not be empty"
            ),
            (
                #"{"deviceId":42,"lat":1,"lon":2,"timestamp":1795255200000}"#, .invalidField,
                "deviceId must be a string, not a number"
            ),
            (#"{"deviceId":"a","lon":2,"timestamp":1795255200000}"#, .missingField, "lat is required"),
            (
                #"{"deviceId":"a","lat":90.5,"lon":2,"timestamp":1795255200000}"#, .invalidField,
                "lat must be a number from -90 to 90"
            ),
            (
                #"{"deviceId":"a","lat":"50.1","lon":2,"timestamp":1795255200000}"#, .invalidField,
                "lat must be a number, not a string"
            ),
            (
                #"{"deviceId":"a","lat":1,"lon":-181,"timestamp":1795255200000}"#, .invalidField,
                "lon must be a number from -180 to 180"
            ),
            (#"{"deviceId":"a","lat":1e999,"lon":2,"timestamp":1795255200000}"#, .invalidField, "lat must be a number"),
            (#"{"deviceId":"a","lat":1,"lon":2}"#, .missingField, "timestamp is required"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200}"#, .invalidField, "not seconds"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000.5}"#, .invalidField, "whole number"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":"yesterday"}"#, .invalidField, "RFC 3339"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":true}"#, .invalidField, "not a boolean"),
            (#"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"accuracy":-1}"#, .invalidField, "accuracy"),
            (
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"heading":360.5}"#, .invalidField,
                "heading must be a number from 0 to 360"
            ),
            (
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"speed":"fast"}"#, .invalidField,
                "speed must be a number"
            ),
            (
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":"fr"}"#, .invalidField,
                "languages must be an array"
            ),
            (
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr",3]}"#, .invalidField,
                "only strings"
            ),
            (
                #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr_BE"]}"#, .invalidField,
                "BCP 47"
            ),
        ]
    )
    func failures(text: String, reason: DecodingFailure.Reason, mentions: String) throws {
        let result = decodePosition(text)
        let failure = try #require(result.failureValue, "decoded \(result) from \(text)")
        #expect(failure.reason == reason, "\(failure)")
        #expect(failure.description.contains(mentions), "\(failure.description)")
    }

    @Test("a type error is reported as such only when the rest is valid JSON")
    func syntaxWinsOverFields() throws {
        let text = #"{"deviceId":42,"lat":1,"lon":2,"timestamp":1795255200000"#
        let failure = try #require(decodePosition(text).failureValue)
        #expect(failure.reason == .invalidJSON)
    }

    @Test("invalid UTF-8 inside a string is refused, even in an ignored member")
    func invalidUTF8() throws {
        var bytes = Array(#"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"x":"?"}"#.utf8)
        bytes[bytes.count - 3] = 0xFF
        let result = bytes.withUnsafeBytes { Position.decode(json: $0) }
        let failure = try #require(result.failureValue)
        #expect(failure.reason == .invalidJSON)
        #expect(failure.description.contains("UTF-8"))
    }

    @Test("each kind of special byte in a device id is read as such at every offset and length (the word-wise scan)")
    func specialBytesAtEveryOffset() throws {
        // What the string's text becomes: the id read back, or nil when the message must be refused as invalid JSON.
        let cases: [(text: [UInt8], id: String?)] = [
            (Array(#"\""#.utf8), "\""),
            (Array(#"\\"#.utf8), "\\"),
            (Array(#"\u00e9"#.utf8), "é"),
            (Array("é".utf8), "é"),
            (Array("😀".utf8), "😀"),
            ([0x7F], "\u{7F}"),
            ([0x1F], nil),
            ([0x0A], nil),
            ([0x00], nil),
            ([0xFF], nil),
            ([0xC3], nil),  // a lead byte without its continuation
        ]
        for (text, id) in cases {
            for before in 0..<18 {
                for after in [0, 1, 7, 8, 9] {
                    let prefix = Array(#"{"lat":1,"lon":2,"timestamp":1795255200000,"deviceId":""#.utf8)
                    let bytes =
                        prefix + Array(repeating: UInt8(ascii: "a"), count: before) + text
                        + Array(repeating: UInt8(ascii: "b"), count: after) + Array(#""}"#.utf8)
                    let result = bytes.withUnsafeBytes { Position.decode(json: $0) }
                    let expected = id.map {
                        String(repeating: "a", count: before) + $0 + String(repeating: "b", count: after)
                    }
                    switch (result, expected) {
                    case (.success(let position), let expected?):
                        #expect(position.deviceId == expected, "\(text) after \(before) bytes, \(after) after it")
                    case (.failure(let failure), nil):
                        #expect(failure.reason == .invalidJSON, "\(text) after \(before) bytes")
                    default:
                        Issue.record("\(text) after \(before) bytes, \(after) after it: \(result)")
                    }
                }
            }
        }
    }

    @Test("member names are matched whole wherever they lie, the message's last bytes included")
    func namesNearTheEnd() throws {
        // The last member's name within 16 bytes of the end, and names of 8, 9, 15, 16 and 17 bytes around it.
        for filler in ["", "a", "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnopq"] {
            let text = #"{"deviceId":"x","lat":1,"timestamp":1795255200000,"\#(filler)":0,"lon":2}"#
            let position = try decodePosition(text).get()
            #expect(position.coordinate == Coordinate(latitude: 1, longitude: 2))
            let shorter = #"{"deviceId":"x","lat":1,"timestamp":1795255200000,"\#(filler)":0,"lo":2}"#
            #expect(throws: DecodingFailure.self) { try decodePosition(shorter).get() }
            let longer = #"{"deviceId":"x","lat":1,"timestamp":1795255200000,"\#(filler)":0,"lonX":2}"#
            #expect(throws: DecodingFailure.self) { try decodePosition(longer).get() }
        }
    }
}

@Suite("Decoding positions one after another", .timeLimit(.minutes(5)))
struct InputDecoderTests {
    private func decode(_ bytes: [UInt8], by decoder: inout InputDecoder) -> Result<InputMessage, DecodingFailure> {
        bytes.withUnsafeBytes { InputMessage.decode(json: $0, as: .positions, by: &decoder) }
    }

    private func decodeAlone(_ bytes: [UInt8]) -> Result<InputMessage, DecodingFailure> {
        bytes.withUnsafeBytes { InputMessage.decode(json: $0, as: .positions) }
    }

    private func storage(_ languages: [String]) -> UnsafeRawPointer? {
        languages.withUnsafeBufferPointer { $0.baseAddress.map(UnsafeRawPointer.init) }
    }

    @Test("the same languages text twice gives one shared list, another text its own")
    func sameListShared() throws {
        var decoder = InputDecoder()
        let first = #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"]}"#
        let again = #"{"languages": ["fr-BE","en"],"deviceId":"b","lat":3,"lon":4,"timestamp":1795255201000}"#
        let other = #"{"deviceId":"c","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en","de"]}"#
        let a = try #require(decode(Array(first.utf8), by: &decoder).successValue?.decodedPosition)
        let b = try #require(decode(Array(again.utf8), by: &decoder).successValue?.decodedPosition)
        let c = try #require(decode(Array(other.utf8), by: &decoder).successValue?.decodedPosition)
        #expect(a.languages == ["fr-BE", "en"] && b.languages == ["fr-BE", "en"])
        #expect(c.languages == ["fr-BE", "en", "de"])
        #expect(storage(a.languages) == storage(b.languages), "the second message reuses the first one's list")
        #expect(storage(c.languages) != storage(a.languages))
    }

    @Test(
        "a message that starts like the remembered list but is not it decodes as it does alone",
        arguments: [
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"]]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"]"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en","x_y"]}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"] x}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"],}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"],"lat":99}"#,
            #"{"deviceId":"a","lat":1,"lon":2,"timestamp":1795255200000,"languages":["fr-BE","en"]}"#,
        ]
    )
    func lookalikes(text: String) {
        var decoder = InputDecoder()
        let remembered = #"{"deviceId":"z","lat":0,"lon":0,"timestamp":1795255200000,"languages":["fr-BE","en"]}"#
        #expect((try? decode(Array(remembered.utf8), by: &decoder).get()) != nil)
        #expect(decode(Array(text.utf8), by: &decoder) == decodeAlone(Array(text.utf8)))
    }

    @Test("20,000 random positions, each twice and then damaged, decode in sequence as each does alone")
    func sequenceAgreesWithAlone() {
        var random = SplitMix64(seed: 0x6C61_6E67_7561_6765)
        var decoder = InputDecoder()
        var reused = 0
        for _ in 0..<20_000 {
            let text = Array(PositionTextGenerator.position(&random).utf8)
            var damaged = text
            PositionTextGenerator.mutate(&damaged, &random)
            // The text, the same again (the remembered list's case), then damaged (the lookalikes' case).
            let first = decode(text, by: &decoder)
            let again = decode(text, by: &decoder)
            let second = decode(damaged, by: &decoder)
            #expect(first == decodeAlone(text), "\(String(decoding: text, as: UTF8.self))")
            #expect(again == first)
            #expect(second == decodeAlone(damaged), "\(String(decoding: damaged, as: UTF8.self))")
            if case .success(.position(let a)) = first, case .success(.position(let b)) = again,
                !a.languages.isEmpty, storage(a.languages) == storage(b.languages)
            {
                reused += 1
            }
        }
        // The remembered list must actually have been handed out for the agreement to mean something.
        #expect(reused > 1000, "reused \(reused)")
    }
}
