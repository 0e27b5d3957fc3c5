import Foundation
import TestSupport
import Testing

@testable import geoworker

@Suite("The demo scenario end to end (mock cluster, real pipeline)", .timeLimit(.minutes(10)))
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

    @Test("each device gets exactly its events, in order")
    func exactEventsPerDevice() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("demo-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var lines: [String] = []
        let events = try await Demo.run(stateDir: directory) { lines.append($0) }.map(summary)
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
}
