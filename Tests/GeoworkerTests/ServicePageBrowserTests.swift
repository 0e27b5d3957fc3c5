import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// The operations page as an operator sees it: a real headless Chromium (Debian's chromium and
/// chromium-driver, installed by `scripts/setup.sh test`) against `geoworker run` on the mock cluster.
@Suite("geoworker run: the operations page in a real browser", .serialized, .timeLimit(.minutes(10)))
struct ServicePageBrowserTests {
    /// Where the test keeps its screenshot (a test artifact, not committed).
    static let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/test-artifacts")

    @Test(
        "Chromium shows the devices in view with their pins and states, a device's card on click, and a new event live"
    )
    func livePage() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 6, positionsPerDevice: 10, topics: bed.topics)
        // One geofence of the fleet's catalog where the devices end, drawn with them.
        let catalog = "geofences-\(UUID().uuidString.prefix(8))"
        try bed.broker.createTopic(catalog, partitions: 1)
        try await bed.produce(
            traffic.commands() + traffic.positions() + [
                ProducerRecord(
                    topic: catalog,
                    key: Array("kehl-yard".utf8),
                    value: Array(#"{"id":"kehl-yard","lat":48.575,"lon":7.96,"radius":800,"tags":["yards"]}"#.utf8)
                )
            ]
        )
        let (child, port) = try await startServing(
            bed,
            ["--http-devices", "--catalog", "--geofences-topic", catalog],
            untilConsumed: 60
        )
        let browser = try await WebDriver.start()
        do {
            try await browser.open("http://127.0.0.1:\(port)/")
            try await browser.waitUntil("the six devices are listed") {
                try await browser.elements(".device-row").count == 6
            }
            try await browser.waitUntil("the summary with the catalog's geofence") {
                try await browser.text("#summary") == "6 of 6 devices in view · 1 of 1 catalog geofences"
            }
            let pins = try await browser.texts(".device-row .pin")
            #expect(pins.count == 12, "two pins each: \(pins)")
            #expect(pins.filter { $0 == "Strasbourg depot: outside" }.count == 6, "\(pins)")
            #expect(pins.filter { $0 == "customer: outside" }.count == 6, "\(pins)")

            try await browser.click(".device-row[data-device='device-3']")
            try await browser.waitUntil("device-3's card") {
                try await browser.text("#card")?.contains("Device device-3") == true
            }
            let card = try #require(try await browser.text("#card"))
            #expect(card.contains("Germany (current)"), "\(card)")
            #expect(card.contains("de-DE"), "\(card)")
            #expect(card.contains("Strasbourg depot outside"), "\(card)")
            // The places: region, nearest locality and the device's clock now (UTC+01:00 in Germany's winter,
            // +02:00 in its summer).
            #expect(card.contains("Baden-Württemberg (DE-BW) (nearest-place)"), "\(card)")
            #expect(card.contains("Near"), "\(card)")
            #expect(card.contains(/Europe\/Berlin, \d\d:\d\d local \(UTC\+0[12]:00\)/), "\(card)")

            try await browser.waitUntil("the live stream is open") {
                try await browser.text("#stream-state") == "(live)"
            }
            // A pin tracked around device-3's position: its initial check announces an entry, live.
            try await bed.produce([
                ProducerRecord(
                    topic: bed.topics.commands,
                    key: Array("device-3".utf8),
                    value: Array(
                        #"{"type":"track","deviceId":"device-3","pin":{"id":"dock","lat":48.568,"lon":7.96,"radius":800,"title":"Kehl dock"}}"#
                            .utf8
                    )
                )
            ])
            try await browser.waitUntil("the new event's row") {
                try await browser.texts(".event-row").contains { $0.hasPrefix("geofence.entered device-3 · Kehl dock") }
            }
            try await browser.waitUntil("the new pin in the device list") {
                try await browser.texts(".device-row[data-device='device-3'] .pin").contains("Kehl dock: inside")
            }
            try FileManager.default.createDirectory(at: Self.artifacts, withIntermediateDirectories: true)
            let screenshot = Self.artifacts.appendingPathComponent("operations-page.png")
            try await browser.screenshot().write(to: screenshot)
            #expect(try Data(contentsOf: screenshot).starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }
}
