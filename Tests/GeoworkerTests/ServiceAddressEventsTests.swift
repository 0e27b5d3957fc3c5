import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// What the worker emits does not depend on the street addresses' provider: events carry no address, and the
/// prefetching apply threads never wait for an answer (README, "Street addresses").
@Suite("geoworker run: events do not depend on the address provider", .serialized, .timeLimit(.minutes(10)))
struct ServiceAddressEventsTests {
    @Test("one input gives byte-identical events with the provider off, answering (prefetch on) and failing")
    func eventsUnchanged() async throws {
        let nominatim = try await NominatimServer()
        let bed = try ServiceTestBed()
        try await bed.produce(Self.commands(bed))
        try await bed.produce(Self.walks(bed))
        let prefetching = ["GEOWORKER_ADDRESS_PREFETCH": "true", "GEOWORKER_ADDRESS_MAX_REQUESTS_PER_SECOND": "50"]
        // Each run goes on until its provider has been asked (and has answered, or failed) during the stream.
        let settings: [(name: String, environment: [String: String], asked: String?)] = [
            ("off", [:], nil),
            (
                "answering", prefetching.merging(["GEOWORKER_ADDRESS_PROVIDER": nominatim.baseURL]) { $1 },
                #"geoworker_address_answers_total{result="address"}"#
            ),
            // Nothing listens on the discard port: every lookup is refused.
            (
                "failing",
                prefetching.merging([
                    "GEOWORKER_ADDRESS_PROVIDER": "http://127.0.0.1:9", "GEOWORKER_ADDRESS_TIMEOUT_MS": "300",
                ]) { $1 },
                "geoworker_address_errors_total{"
            ),
        ]
        // Each device's events, in order: the events of different devices of one partition may interleave otherwise
        // from run to run (several apply threads send them).
        var emitted: [String: [String: [Emitted]]] = [:]
        for setting in settings {
            let instance = try bed.instance(named: setting.name)
            defer { try? FileManager.default.removeItem(atPath: instance.stateDir) }
            let child = try bed.start([], as: instance, environment: setting.environment)
            let port = try await listeningPort(of: child)
            try await waitUntilConsumed(port, positions: Self.walkers * Self.steps)
            if let asked = setting.asked {
                try await waitUntil("\(setting.name): the provider asked") {
                    try await get(port, "metrics").body.contains(asked)
                }
            }
            child.send(SIGTERM)
            #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0), "\(child.errors.suffix(3000))")
            let events = try await bed.readAll(instance.events, partitions: bed.partitions)
            emitted[setting.name] = Dictionary(grouping: events) { $0.key ?? "" }
                .mapValues { $0.map { Emitted(partition: $0.partition, value: $0.value, headers: $0.headers) } }
        }
        let off = try #require(emitted["off"])
        let types = Set(off.values.joined().compactMap { Self.type(of: $0.value) })
        #expect(types.isSuperset(of: ["geofence.entered", "geofence.exited", "country.changed"]), "\(types)")
        #expect(off.count == Self.walkers)
        for name in ["answering", "failing"] {
            let run = emitted[name] ?? [:]
            let differing = off.keys.sorted().filter { run[$0] != off[$0] }
            #expect(differing.isEmpty, "\(name): the events of \(differing) differ from those with the provider off")
        }
        #expect(nominatim.reverseRequests > 0, "the answering run asked the provider")
    }

    /// The casino's square, a pin every walker tracks.
    static func commands(_ bed: ServiceTestBed) -> [ProducerRecord] {
        (0..<walkers).map { walker in
            ProducerRecord(
                topic: bed.topics.commands,
                key: Array("walker-\(walker)".utf8),
                value: Array(
                    #"{"type":"track","deviceId":"walker-\#(walker)","pin":{"id":"casino","lat":43.73965,"lon":7.4277,"radius":150}}"#
                        .utf8
                ),
                timestampMilliseconds: start - 1_000
            )
        }
    }

    /// Each walker from the harbour across the casino's square to the Larvotto, a fix every 20 s: into the pin and out,
    /// through many 100 m buckets.
    static func walks(_ bed: ServiceTestBed) -> [ProducerRecord] {
        (0..<walkers).flatMap { walker in
            (0..<steps).map { step in
                let along = Double(step) / Double(steps - 1)
                let latitude = 43.7330 + 0.0110 * along + Double(walker) * 0.0002
                let longitude = 7.4190 + 0.0170 * along
                let time = start + Int64(step) * 20_000
                return ProducerRecord(
                    topic: bed.topics.positions,
                    key: Array("walker-\(walker)".utf8),
                    value: Array(
                        #"{"deviceId":"walker-\#(walker)","lat":\#(latitude),"lon":\#(longitude),"timestamp":\#(time),"accuracy":6}"#
                            .utf8
                    ),
                    timestampMilliseconds: time
                )
            }
        }
    }

    /// An event as its device's consumer sees it: where it went, and its bytes.
    private struct Emitted: Equatable {
        let partition: Int32
        let value: [UInt8]
        let headers: [String: String]
    }

    static let walkers = 8
    static let steps = 30
    static let start: Int64 = 1_795_000_000_000

    private static func type(of event: [UInt8]) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(event)) as? [String: Any])?["type"] as? String
    }
}
