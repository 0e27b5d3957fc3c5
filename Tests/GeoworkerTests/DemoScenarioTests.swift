import Foundation
import TestSupport
import Testing

@testable import geoworker

@Suite("The demo scenario end to end (embedded mock cluster or noida-db, real pipeline)", .timeLimit(.minutes(10)))
struct DemoScenarioTests {
    struct Event: Hashable, CustomStringConvertible {
        let device: String
        let type: String
        let detail: String
        var description: String { "\(device) \(type) \(detail)" }
    }

    func summary(_ value: [UInt8]) throws -> Event {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(value)) as? [String: Any])
        let data = try #require(object["data"] as? [String: Any])
        let type = try #require(object["type"] as? String)
        let detail: String
        switch type {
        case "country.changed": detail = "\(data["from"] as? String ?? "-")>\(data["to"] as? String ?? "?")"
        case "language.suggested": detail = "\(data["language"] as? String ?? "?")"
        case "region.changed":
            let code = { (side: Any?) in (side as? [String: Any])?["code"] as? String ?? "-" }
            detail = "\(code(data["from"]))>\(code(data["to"]))"
        case "timezone.changed":
            let zone = { (side: Any?) in (side as? [String: Any])?["timeZone"] as? String ?? "-" }
            detail = "\(zone(data["from"]))>\(zone(data["to"]))"
        default:
            let pin = data["pin"] as? [String: Any]
            detail = "\(pin?["id"] as? String ?? "?")\(data["initial"] as? Bool == true ? " initial" : "")"
        }
        return Event(device: try #require(object["subject"] as? String), type: type, detail: detail)
    }

    @Test("each device gets exactly its events, in order", arguments: TestBroker.Kind.allCases)
    func exactEventsPerDevice(on kind: TestBroker.Kind) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var lines: [String] = []
        // On noida-db the demo runs as on a user's cluster (`demo --brokers`); the mock is the embedded demo's.
        let noida = kind == .noida ? try await NoidaBroker() : nil
        let broker = noida.map { Demo.Broker.existing(brokers: $0.bootstrapServers, kafkaProperties: [:]) }
        let events = try await Demo.run(on: broker ?? .embedded, stateDir: directory) { lines.append($0) }.map(summary)
        func of(_ device: String) -> [String] {
            events.filter { $0.device == device }.map { "\($0.type) \($0.detail)" }
        }

        #expect(
            of("truck-17") == [
                "country.changed ->FR", "language.suggested fr-FR", "region.changed ->FR-ARA",
                "timezone.changed ->Europe/Paris", "geofence.approaching geneva-depot",
                "country.changed FR>CH", "language.suggested fr-CH", "region.changed FR-ARA>CH-GE",
                "timezone.changed Europe/Paris>Europe/Zurich",
                "geofence.entered geneva-depot", "geofence.exited geneva-depot",
            ]
        )
        // A country change comes with the first fix whose accuracy disc lies across the border: for van-3 the
        // first fix in Kehl (before it reaches the warehouse), for car-9 the first in Maastricht.
        #expect(
            of("van-3") == [
                "country.changed ->FR", "language.suggested fr-FR", "region.changed ->FR-GES",
                "timezone.changed ->Europe/Paris",
                "country.changed FR>DE", "language.suggested de-DE", "region.changed FR-GES>DE-BW",
                "timezone.changed Europe/Paris>Europe/Berlin", "geofence.entered kehl-warehouse",
                "geofence.dwelled kehl-warehouse", "geofence.exited kehl-warehouse",
            ]
        )
        #expect(
            of("car-9") == [
                "country.changed ->BE", "language.suggested nl-BE", "region.changed ->BE-BRU",
                "timezone.changed ->Europe/Brussels",
                "geofence.entered brussels-office initial", "geofence.exited brussels-office",
                "region.changed BE-BRU>BE-VLG", "geofence.crossed e40-gantry", "country.changed BE>NL",
                "language.suggested nl-NL", "region.changed BE-VLG>NL-LI",
                "timezone.changed Europe/Brussels>Europe/Amsterdam", "geofence.entered maastricht-client",
            ]
        )
        // Indiana to Michigan: the state line (from the region polygons) and the time-zone line (central to
        // eastern) are crossed a fix apart.
        #expect(
            of("rig-4") == [
                "country.changed ->US", "language.suggested en-US", "region.changed ->US-IN",
                "timezone.changed ->America/Chicago", "region.changed US-IN>US-MI",
                "timezone.changed America/Chicago>America/Detroit",
            ]
        )
        #expect(events.count == 41)
        // The operator's view: one readable line per event.
        #expect(lines.contains { $0.contains("truck-17") && $0.contains("FR -> CH (Switzerland)") })
        #expect(
            lines.contains { $0.contains("van-3") && $0.contains("Kehl warehouse (kehl-warehouse), inside for 3 min") }
        )
        #expect(lines.contains { $0.contains("car-9") && $0.contains("passed through between the fixes of 08:14:00") })
        #expect(lines.contains { $0.contains("truck-17") && $0.contains("ETA 3 min 6 s") })
        #expect(lines.contains { $0.contains("rig-4") && $0.contains("US-IN Indiana -> US-MI Michigan") })
        #expect(
            lines.contains {
                $0.contains("rig-4") && $0.contains("America/Chicago (UTC-06:00) -> America/Detroit (UTC-05:00)")
            }
        )
    }

    @Test("demo --serve: after the trace the page and the device endpoints are up at the printed address")
    func serve() async throws {
        let demo = try BackgroundProcess(
            ChildProcess.builtExecutable("geoworker"),
            ["demo", "--serve", "--http-port", "0"],
            keepOutput: true
        )
        var address: String?
        try await waitUntil("the address is printed", timeout: .seconds(90)) {
            address = demo.output.firstMatch(of: /are at http:\/\/127\.0\.0\.1:(\d+)\//).map { String($0.1) }
            return address != nil || !demo.isRunning
        }
        let port = try #require(address.flatMap(Int.init), "\(demo.output)\(demo.errors.suffix(2000))")
        #expect(demo.output.contains("demo: 41 events"), "the trace's events come first")
        #expect(try await get(port, "").body.contains("EventSource"))
        let map = try await get(port, "map/devices")
        #expect(map.body.contains(#""inView":4,"#), "the trace's four devices: \(map.body.prefix(300))")
        let card = try await get(port, "devices/truck-17")
        #expect(card.status == 200 && card.body.contains(#""code":"CH""#), "\(card.body)")
        demo.send(SIGINT)
        #expect(await demo.waitForExit(timeout: .seconds(20)) == .exited(0), "\(demo.errors.suffix(2000))")
    }

    @Test("demo --brokers on noida-db: the trace's events, topics of its own left there, the changelog the worker made")
    func demoOnOwnBroker() async throws {
        let broker = try await NoidaBroker()
        let first = try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["demo", "--brokers", broker.bootstrapServers]
        )
        #expect(first.status == 0, "\(first.output)\(first.errors.suffix(2000))\(broker.log.suffix(2000))")
        #expect(first.output.contains("demo: 41 events; the topics stay at \(broker.bootstrapServers)"))
        let run = try #require(first.output.firstMatch(of: /group (geoworker-demo-[0-9a-f]{8})/).map { String($0.1) })
        #expect(first.output.contains("topics \(run)-positions, \(run)-commands, \(run)-events, \(run)-dead-letters"))
        // The same readable lines as the embedded demo's.
        #expect(first.output.contains("FR -> CH (Switzerland)") && first.output.contains("ETA 3 min 6 s"))
        // Nothing left behind on this host: the state directory went with the demo.
        let state = try #require(first.output.firstMatch(of: /state in (\S+) \(removed when the demo ends\)/))
        #expect(!FileManager.default.fileExists(atPath: String(state.1)), "\(state.1)")

        // Left for inspection: the events, and the changelog the worker created (compacted, the positions' partitions).
        let topics = try await ChildProcess.run("/usr/bin/kcat", ["-b", broker.bootstrapServers, "-L"])
        #expect(topics.output.contains("topic \"\(run)-events\" with 4 partitions"), "\(topics.output)")
        #expect(topics.output.contains("topic \"\(run)-device-state-changelog\" with 4 partitions"))
        let changelog = try await broker.topicConfiguration("\(run)-device-state-changelog")
        #expect(changelog["cleanup.policy"] == "compact", "\(changelog)")
        // Kept whatever the trace's age: its messages carry the times it was recorded at (2026-11-21), which a
        // broker's 7-day retention deleted on arrival from 2026-11-28 on.
        for role in ["positions", "commands", "events", "dead-letters"] {
            let kept = try await broker.topicConfiguration("\(run)-\(role)")
            #expect(kept["retention.ms"] == "-1", "\(role): \(kept)")
        }

        // A second run on the same broker meets none of the first's messages or offsets.
        let second = try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["demo", "--brokers", broker.bootstrapServers]
        )
        #expect(second.status == 0 && second.output.contains("demo: 41 events"), "\(second.output)")
    }

    @Test("demo --kafka without --brokers, or a property without =: refused, saying why")
    func demoFlagsRefused() async throws {
        let geoworker = ChildProcess.builtExecutable("geoworker")
        let stray = try await ChildProcess.run(geoworker, ["demo", "--kafka", "acks=all"])
        #expect(stray.status != 0 && stray.errors.contains("--kafka applies to a Kafka given with --brokers"))
        let bare = try await ChildProcess.run(geoworker, ["demo", "--brokers", "localhost:9092", "--kafka", "acks"])
        #expect(bare.status != 0 && bare.errors.contains("--kafka takes KEY=VALUE, not 'acks'"))
    }
}
