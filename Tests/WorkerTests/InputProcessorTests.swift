import GeoCore
import Kafka
import Testing

@testable import Worker

@Suite("Input processor: events and dead letters", .timeLimit(.minutes(5)))
struct InputProcessorTests {
    /// Everywhere is the same country: these tests are about the processor's routing, not geography.
    struct OneCountry: CountryResolver {
        func countryCode(at coordinate: Coordinate) -> String? { "FR" }
        func countryCode(at coordinate: Coordinate, within radius: Double) -> String? { "FR" }
        func countryName(for code: String) -> String { "France" }
    }

    let topics = WorkerConfiguration.Topics(positions: "p", commands: "c", events: "e", deadLetters: "dl")

    func processor() -> InputProcessor {
        let tracker = DeviceTracker(
            configuration: TrackerConfiguration(maxPinsPerDevice: 1),
            countries: OneCountry()
        )
        return InputProcessor(registry: DeviceRegistry(tracker: tracker), topics: topics)
    }

    func feed(_ processor: inout InputProcessor, _ text: String?, command: Bool, offset: Int64, key: String? = "dev-1")
    {
        let bytes = text.map { Array($0.utf8) }
        let origin = MessageOrigin(topic: command ? "c" : "p", partition: 0, offset: offset, timestamp: 0)
        func process(key: UnsafeRawBufferPointer?) {
            if let bytes {
                bytes.withUnsafeBytes {
                    processor.process(value: $0, key: key, kind: command ? .commands : .positions, origin: origin)
                }
            } else {
                processor.process(value: nil, key: key, kind: command ? .commands : .positions, origin: origin)
            }
        }
        if let key { Array(key.utf8).withUnsafeBytes { process(key: $0) } } else { process(key: nil) }
    }

    func header(_ record: ProducerRecord, _ name: String) -> String? {
        record.headers.first { $0.name == name }?.stringValue
    }

    @Test("messages keyed by something else than their deviceId, or not keyed, are applied and counted")
    func keysOtherThanDeviceId() {
        var processor = processor()
        let position = #"{"deviceId":"dev-1","lat":48.85,"lon":2.35,"timestamp":1795300000000}"#
        let later = #"{"deviceId":"dev-1","lat":48.85,"lon":2.35,"timestamp":1795300010000}"#
        let track = #"{"type":"track","deviceId":"dev-1","pin":{"id":"a","lat":48.85,"lon":2.35,"radius":100}}"#
        feed(&processor, position, command: false, offset: 0)
        feed(&processor, later, command: false, offset: 1, key: "fleet-7")
        feed(&processor, track, command: true, offset: 0, key: nil)
        feed(&processor, track, command: true, offset: 1, key: "dev-10")
        feed(&processor, "not json", command: false, offset: 2, key: "other")  // dead-lettered, not counted here
        #expect(processor.counters.keyNotDeviceId == 3)
        #expect(processor.counters.positions == 2)
        #expect(processor.counters.commands == 2)
    }

    @Test("bad messages become dead letters with their bytes, key and reason; good ones still give their events")
    func deadLetters() {
        var processor = processor()
        let position = #"{"deviceId":"dev-1","lat":48.85,"lon":2.35,"timestamp":"2026-11-21T10:00:00Z"}"#
        let pin = #"{"type":"track","deviceId":"dev-1","pin":{"id":"a","lat":48.85,"lon":2.35,"radius":100}}"#
        let secondPin = #"{"type":"track","deviceId":"dev-1","pin":{"id":"b","lat":1,"lon":1,"radius":100}}"#
        let inputs: [(String?, Bool)] = [
            ("not json", false),
            (#"{"deviceId":"dev-1","lat":95,"lon":2,"timestamp":"2026-11-21T10:00:00Z"}"#, false),
            (nil, false),
            (#"{"type":"teleport","deviceId":"dev-1"}"#, true),
            (pin, true),
            (secondPin, true),  // over the limit of one pin
            (position, false),
        ]
        for (offset, (text, command)) in inputs.enumerated() {
            feed(&processor, text, command: command, offset: Int64(offset))
        }
        let output = processor.withOutput { $0 }
        let deadLetters = output.deadLetters
        #expect(deadLetters.allSatisfy { $0.topic == "dl" })
        #expect(
            deadLetters.map { header($0, DeadLetter.Header.reason) } == [
                "invalid-json", "invalid-field", "empty-message", "unknown-command", "rejected",
            ]
        )
        #expect(deadLetters.map { header($0, DeadLetter.Header.origin) }.last == "c:0:5")
        #expect(deadLetters.first?.value == Array("not json".utf8))
        #expect(deadLetters.allSatisfy { $0.key == Array("dev-1".utf8) })
        #expect(
            processor.counters.deadLettered == [
                "invalid-json": 1, "invalid-field": 1, "empty-message": 1,
                "unknown-command": 1, "rejected": 1,
            ]
        )

        // The valid position still enters the pin and gives the first country.
        let events = output.events.records
        #expect(processor.counters.events == ["geofence.entered": 1, "country.changed": 1])
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0.topic == "e" && $0.key == Array("dev-1".utf8) })
        #expect(events.allSatisfy { header($0, "content-type") == CloudEventEncoder.contentType })
        #expect(
            events.map { String(decoding: $0.value ?? [], as: UTF8.self) }.allSatisfy {
                $0.contains(#""subject":"dev-1""#)
            }
        )
        // Handed out once: the next output starts empty.
        #expect(processor.withOutput { $0.isEmpty })
    }
}
