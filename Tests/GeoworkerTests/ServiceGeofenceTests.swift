import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// Polygons, dwell, crossings and approaching through the whole service: commands and positions produced to
/// the mock cluster, `geoworker run` as an operator runs it, restarted in the middle of a dwell and of an
/// approach, the events read back from the events topic and checked against the schemas.
@Suite("Fleet geofences end to end (mock cluster, real pipeline)", .timeLimit(.minutes(10)))
struct ServiceGeofenceTests {
    static let start: Int64 = 1_795_400_000_000

    /// A 600 m square yard near Strasbourg with a 100 m office cut out of its middle, dwell 2 minutes.
    static let yard = #"""
        {"type":"track","deviceId":"van-1","pin":{"id":"yard","title":"Yard","dwellSeconds":120,"shape":
        {"type":"Polygon","coordinates":[[[7.746,48.577],[7.754,48.577],[7.754,48.583],[7.746,48.583],[7.746,48.577]],
        [[7.7493,48.5795],[7.7493,48.5805],[7.7507,48.5805],[7.7507,48.5795],[7.7493,48.5795]]]}}}
        """#

    @Test("a polygon dwell, a crossing between sparse fixes and an approach, across a restart, as the schemas say")
    func fleet() async throws {
        let bed = try ServiceTestBed()
        let commands = [
            command("van-1", Self.yard.replacingOccurrences(of: "\n", with: "")),
            command(
                "car-2",
                #"{"type":"track","deviceId":"car-2","pin":{"id":"gantry","lat":48.60,"lon":7.70,"radius":200}}"#
            ),
            command(
                "truck-3",
                #"{"type":"track","deviceId":"truck-3","pin":{"id":"gate","lat":48.63,"lon":7.80,"radius":300,"approachSeconds":120}}"#
            ),
            // Refused: an unclosed ring (dead-lettered by the decoder), 2,000 vertices (refused by the tracker).
            command(
                "van-1",
                #"{"type":"track","deviceId":"van-1","pin":{"id":"bad","shape":{"type":"Polygon","coordinates":[[[7,48],[7.1,48],[7.1,48.1],[7,48.1]]]}}}"#
            ),
            command("van-1", Self.largePolygon(vertices: 2_000)),
        ]
        // Before the restart: the van enters the yard, the truck heads for the gate (ETA 200 s, not yet).
        let before = [
            position("van-1", lat: 48.570, lon: 7.750, at: 0),
            position("van-1", lat: 48.578, lon: 7.750, at: 60),
            position("car-2", lat: 48.582, lon: 7.70, at: 0),
            position("truck-3", lat: 48.600, lon: 7.80, at: 0, speed: 20, heading: 0),
        ]
        // After it: the van stays past the dwell and leaves; the car passes the gantry between two fixes a
        // minute apart; the truck comes within 132 s (not yet), then 95 s of the gate, then arrives.
        let after = [
            position("van-1", lat: 48.5785, lon: 7.751, at: 150),
            position("van-1", lat: 48.5785, lon: 7.751, at: 200),
            position("van-1", lat: 48.590, lon: 7.751, at: 260),
            position("car-2", lat: 48.618, lon: 7.70, at: 60),
            position("truck-3", lat: 48.6036, lon: 7.80, at: 18, speed: 20, heading: 0),
            position("truck-3", lat: 48.6102, lon: 7.80, at: 80, speed: 20, heading: 2),
            position("truck-3", lat: 48.6300, lon: 7.80, at: 160, speed: 20, heading: 0),
        ]
        func on(_ topic: String, _ records: [ProducerRecord]) -> [ProducerRecord] {
            records.map { record in
                var record = record
                record.topic = topic
                return record
            }
        }
        try await bed.produce(on(bed.topics.commands, commands) + on(bed.topics.positions, before))
        try await bed.runUntilCaughtUp()
        try await bed.produce(on(bed.topics.positions, after))
        try await bed.runUntilCaughtUp()

        let events = try await bed.events()
        let geofenceEvents = events.filter { $0.type.hasPrefix("geofence.") }
        func of(_ device: String) -> [String] { geofenceEvents.filter { $0.subject == device }.map(\.type) }
        #expect(of("van-1") == ["geofence.entered", "geofence.dwelled", "geofence.exited"])
        #expect(of("car-2") == ["geofence.crossed"])
        #expect(of("truck-3") == ["geofence.approaching", "geofence.entered"])

        let data = try Dictionary(geofenceEvents.map { ($0.type, try Self.data(of: $0)) }) { first, _ in first }
        let dwell = try #require(data["geofence.dwelled"])
        #expect(dwell["dwellSeconds"] as? Double == 140, "inside since the fix at 60 s, announced at 200 s")
        #expect((dwell["pin"] as? [String: Any])?["kind"] as? String == "polygon")
        #expect((dwell["pin"] as? [String: Any])?["bbox"] as? [Double] == [7.746, 48.577, 7.754, 48.583])
        let approach = try #require(data["geofence.approaching"])
        #expect(approach["basis"] as? String == "reported-speed")
        #expect((approach["etaSeconds"] as? Double).map { (85...105).contains($0) } == true, "\(approach)")
        let crossing = try #require(data["geofence.crossed"])
        #expect((crossing["from"] as? [String: Any])?["lat"] as? Double == 48.582)
        #expect((crossing["to"] as? [String: Any])?["lat"] as? Double == 48.618)

        let letters = try await bed.readAll(bed.topics.deadLetters, partitions: 1)
        #expect(letters.count == 2)
        #expect(letters.contains { $0.headers["geoworker-error"]?.contains("ring 0 is not closed") == true })
        #expect(letters.contains { $0.headers["geoworker-error"]?.contains("tracker.maxVerticesPerPin") == true })

        let lines =
            commands.prefix(3).map { "command\t" + String(decoding: $0.value ?? [], as: UTF8.self) }
            + (before + after).map { "position\t" + String(decoding: $0.value ?? [], as: UTF8.self) }
            + events.map { "event\t" + $0.json }
        let valid = try await ServiceTestBed.validate(lines)
        #expect(valid.status == 0, "\(valid.output)")
        #expect(valid.output.contains("validated \(lines.count) messages"))
        let produced = try await bed.expectProducedMessagesMatchAsyncAPI()
        #expect(produced["deadLetters"] == 2)
    }

    static func data(of event: ServiceTestBed.Event) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? [String: Any]
        return try #require(object?["data"] as? [String: Any])
    }

    /// A track of a circle-like polygon of `vertices` vertices.
    static func largePolygon(vertices: Int) -> String {
        var ring = (0..<vertices).map { index -> String in
            let angle = Double(index) / Double(vertices) * 2 * Double.pi
            return "[\(7.5 + 0.01 * cos(angle)),\(48.5 + 0.01 * sin(angle))]"
        }
        ring.append(ring[0])
        return #"{"type":"track","deviceId":"van-1","pin":{"id":"big","shape":{"type":"Polygon","coordinates":[["#
            + ring.joined(separator: ",") + "]]}}}"
    }

    func command(_ device: String, _ json: String) -> ProducerRecord {
        ProducerRecord(
            topic: "",
            key: Array(device.utf8),
            value: Array(json.utf8),
            timestampMilliseconds: Self.start - 1000
        )
    }

    func position(
        _ device: String,
        lat: Double,
        lon: Double,
        at seconds: Int64,
        speed: Double? = nil,
        heading: Double? = nil
    ) -> ProducerRecord {
        var json =
            #"{"deviceId":"\#(device)","lat":\#(lat),"lon":\#(lon),"timestamp":\#(Self.start + seconds * 1000),"accuracy":10"#
        if let speed { json += #","speed":\#(speed)"# }
        if let heading { json += #","heading":\#(heading)"# }
        return ProducerRecord(
            topic: "",
            key: Array(device.utf8),
            value: Array((json + "}").utf8),
            timestampMilliseconds: Self.start + seconds * 1000
        )
    }
}
