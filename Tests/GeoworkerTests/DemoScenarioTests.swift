import Foundation
import TestSupport
import Testing

@testable import geoworker

@Suite("The demo scenario end to end (mock cluster, real pipeline)")
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
        let events = try await Demo.run(stateDirectory: directory) { lines.append($0) }.map(summary)
        func of(_ device: String) -> [String] {
            events.filter { $0.device == device }.map { "\($0.type) \($0.detail)" }
        }

        #expect(
            of("truck-17") == [
                "country.changed ->FR", "language.suggested fr-FR", "geofence.approaching geneva-depot",
                "country.changed FR>CH", "language.suggested fr-CH",
                "geofence.entered geneva-depot", "geofence.exited geneva-depot",
            ]
        )
        // A country change comes with the first fix whose accuracy disc lies across the border: for van-3 the
        // first fix in Kehl (before it reaches the warehouse), for car-9 the first in Maastricht.
        #expect(
            of("van-3") == [
                "country.changed ->FR", "language.suggested fr-FR",
                "country.changed FR>DE", "language.suggested de-DE", "geofence.entered kehl-warehouse",
                "geofence.dwelled kehl-warehouse", "geofence.exited kehl-warehouse",
            ]
        )
        #expect(
            of("car-9") == [
                "country.changed ->BE", "language.suggested nl-BE",
                "geofence.entered brussels-office initial", "geofence.exited brussels-office",
                "geofence.crossed e40-gantry", "country.changed BE>NL", "language.suggested nl-NL",
                "geofence.entered maastricht-client",
            ]
        )
        #expect(events.count == 22)
        // The operator's view: one readable line per event.
        #expect(lines.contains { $0.contains("truck-17") && $0.contains("FR -> CH (Switzerland)") })
        #expect(
            lines.contains { $0.contains("van-3") && $0.contains("Kehl warehouse (kehl-warehouse), inside for 3 min") }
        )
        #expect(lines.contains { $0.contains("car-9") && $0.contains("passed through between the fixes of 08:14:00") })
        #expect(lines.contains { $0.contains("truck-17") && $0.contains("ETA 3 min 6 s") })
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
        #expect(demo.output.contains("demo: 22 events"), "the trace's events come first")
        #expect(try await get(port, "").body.contains("EventSource"))
        let map = try await get(port, "map/devices")
        #expect(map.body.contains(#""inView":3,"#), "the trace's three devices: \(map.body.prefix(300))")
        let card = try await get(port, "devices/truck-17")
        #expect(card.status == 200 && card.body.contains(#""code":"CH""#), "\(card.body)")
        demo.send(SIGINT)
        #expect(await demo.waitForExit(timeout: .seconds(20)) == .exited(0), "\(demo.errors.suffix(2000))")
    }
}
