import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// The operator's tools around a running service: `geoworker pins` and `geoworker tail`.
@Suite("geoworker pins and tail", .serialized, .timeLimit(.minutes(10)))
struct ServiceToolsTests {
    @Test("pins track/untrack produce commands the worker carries out; pins list shows them; tail prints the events")
    func pinsAndTail() async throws {
        let bed = try ServiceTestBed()
        let brokers = ["--brokers", bed.cluster.bootstrapServers, "--commands-topic", bed.topics.commands]
        for device in 0..<3 {
            let tracked = try await runGeoworker(
                [
                    "pins", "track", "--device", "device-\(device)", "--id", "customer", "--lat", "48.565", "--lon",
                    "7.88",
                    "--radius", "1200", "--title", "Customer", "--metadata", #"{"account":42}"#,
                ] + brokers
            )
            #expect(tracked.status == 0, "\(tracked.errors)")
            #expect(tracked.output.contains(#""type":"track""#))
        }
        let refused = try await runGeoworker(
            ["pins", "track", "--device", "device-0", "--id", "x", "--lat", "48", "--lon", "7", "--radius", "0"]
                + brokers
        )
        #expect(refused.status != 0)
        #expect(refused.errors.contains("--radius must be a number from 1 to 100000"), "\(refused.errors)")
        let yard = #"{"type":"Polygon","coordinates":[[[7.7,48.5],[7.8,48.5],[7.8,48.6],[7.7,48.6],[7.7,48.5]]]}"#
        let polygon = try await runGeoworker(
            ["pins", "track", "--device", "device-0", "--id", "yard", "--shape", yard, "--dwell-seconds", "60"]
                + brokers
        )
        #expect(polygon.status == 0, "\(polygon.errors)")
        let unclosed = try await runGeoworker(
            [
                "pins", "track", "--device", "device-0", "--id", "x", "--shape",
                yard.replacingOccurrences(of: ",[7.7,48.5]]]", with: "]]"),
            ]
                + brokers
        )
        #expect(
            unclosed.status != 0 && unclosed.errors.contains("--shape ring 0 is not closed"),
            "\(unclosed.errors)"
        )
        let untracked = try await runGeoworker(["pins", "untrack", "--device", "device-2", "--all"] + brokers)
        #expect(untracked.status == 0, "\(untracked.errors)")
        #expect(try await bed.messageCount(bed.topics.commands, partitions: bed.partitions) == 5)

        try await bed.runUntilCaughtUp()
        let listed = try await runGeoworker(["pins", "list", "--state-dir", bed.stateDir])
        #expect(listed.status == 0, "\(listed.errors)")
        // When the listing was stored, and that a command announcing nothing shows only after the next store.
        #expect(
            listed.errors.contains(/the state as the worker last wrote it, \d+ s ago; an untrack/),
            "\(listed.errors)"
        )
        #expect(
            listed.output.split(separator: "\n") == [
                "device-0  customer  48.565,7.88  r=1200.0 m  undetermined  Customer",
                "device-0  yard  polygon of 4 vertices in [7.7,48.5,7.8,48.6]  undetermined",
                "device-1  customer  48.565,7.88  r=1200.0 m  undetermined  Customer",
            ]
        )

        let traffic = BorderTraffic(devices: 3, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.positions())
        try await bed.runUntilCaughtUp()
        let one = try await runGeoworker([
            "pins", "list", "--state-dir", bed.stateDir, "--device", "device-1", "--json",
        ])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(one.output.utf8)) as? [String: Any])
        let pins = try #require(object["pins"] as? [[String: Any]])
        #expect(
            pins.count == 1 && pins.first?["state"] as? String == "outside",
            "it drove through and out: \(one.output)"
        )

        let events = try await bed.events()
        let tailArguments = [
            "tail", "--brokers", bed.cluster.bootstrapServers, "--topic", bed.topics.events,
            "--from-beginning", "--until-end",
        ]
        let lines = try await runGeoworker(tailArguments)
        #expect(lines.status == 0, "\(lines.errors)")
        let text = lines.output.split(separator: "\n")
        #expect(text.count == events.count)
        #expect(text.contains { $0.contains("geofence.entered") && $0.contains("Customer (customer)") })
        #expect(text.contains { $0.contains("country.changed") && $0.contains("FR -> DE (Germany)") })
        let json = try await runGeoworker(tailArguments + ["--json"])
        let parsed = json.output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(Set(parsed.compactMap { $0["id"] as? String }) == Set(events.map(\.id)))

        let missing = try await runGeoworker(["pins", "list", "--state-dir", bed.stateDir + "-nowhere"])
        #expect(missing.status == 1 && missing.errors.contains("no geoworker state"))
    }
}
