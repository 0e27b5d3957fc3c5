import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// The operations page as an operator sees it: a real headless Chromium (Debian's chromium and
/// chromium-driver, installed by `scripts/setup.sh test`) against two `geoworker run` instances of one group on the
/// mock cluster, the page on Leaflet from Debian's libjs-leaflet, its tiles from a local fixture (the tests have no
/// network).
@Suite("geoworker run: the operations page in a real browser", .serialized, .timeLimit(.minutes(10)))
struct ServicePageBrowserTests {
    /// Where the test keeps its screenshot (a test artifact, not committed).
    static let artifacts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/test-artifacts")

    @Test(
        "Chromium shows the group's devices with their pins and states on tiles, a device's card on click, a new event live"
    )
    func livePage() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 6, positionsPerDevice: 10, topics: bed.topics)
        // One geofence of the fleet's catalog where the devices end, drawn with them.
        let catalog = "geofences-\(UUID().uuidString.prefix(8))"
        try bed.broker.createTopic(catalog, partitions: 1)
        try bed.broker.createTopic("\(bed.group)-instances", partitions: 1)
        let tiles = try TileFixture()
        defer { tiles.server.send(SIGKILL) }
        // Two instances of one group, each advertising its address: the page of one shows the whole group.
        // Trips, a speed limit and a silence threshold watched: the card shows them.
        let arguments = [
            "--http-devices", "--catalog", "--geofences-topic", catalog, "--http-advertised-address",
            "http://127.0.0.1", "--set", "trips.enabled=true", "--set", "speed.limitMetersPerSecond=30", "--set",
            "liveness.silentAfterSeconds=600",
        ]
        let environment = [
            "GEOWORKER_HTTP_MAP_TILES": "http://127.0.0.1:\(tiles.port)/{z}/{x}/{y}.png",
            "GEOWORKER_HTTP_MAP_TILES_ATTRIBUTION": "Tiles: the test's fixture",
        ]
        let other = try bed.start(arguments, as: ServiceScaleOutTests.member(bed, "b"), environment: environment)
        defer { other.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(other, "assigned [1-9]")
        let child = try bed.start(arguments, as: ServiceScaleOutTests.member(bed, "a"), environment: environment)
        defer { child.send(SIGKILL) }
        let port = try await listeningPort(of: child)
        try await ServiceGroupAnswersTests.waitForDirectory(port, instances: 2, partitions: bed.partitions, log: child)
        // Produced once both hold their partitions: each device applied by the instance that holds it (its country
        // "current", confirmed by a fix there).
        try await bed.produce(
            traffic.commands() + traffic.positions() + [
                ProducerRecord(
                    topic: catalog,
                    key: Array("kehl-yard".utf8),
                    value: Array(#"{"id":"kehl-yard","lat":48.575,"lon":7.96,"radius":800,"tags":["yards"]}"#.utf8)
                )
            ]
        )
        try await waitUntil("every position applied") {
            var consumed = 0
            for instance in [port, try await listeningPort(of: other)] {
                consumed += counter("geoworker_positions_consumed_total", in: try await get(instance, "metrics").body)
            }
            return consumed >= 60
        }
        let browser = try await WebDriver.start()
        do {
            try await browser.open("http://127.0.0.1:\(port)/")
            do {
                try await browser.waitUntil("the group's two instances named") {
                    // "instances: <a name>: 0,1 · <another> (this one): 2,3", by name.
                    let group = try await browser.text("#group") ?? ""
                    return group.contains("(this one)")
                        && group.contains(/^instances: [^·]+: [0-9,]+ · [^·]+: [0-9,]+$/)
                }
            } catch {
                let shown = [
                    try await browser.text("#notice"), try await browser.text("#summary"),
                    try await browser.text("#group"),
                ]
                Issue.record("the page shows: \(shown)")
                throw error
            }
            try await browser.waitUntil("tiles drawn from the operator's tile server") {
                try await browser.elements("img.leaflet-tile-loaded").count > 0
            }
            #expect(
                tiles.server.errors.contains("GET /"),
                "the tile server was asked: \(tiles.server.errors.suffix(500))"
            )
            #expect(
                try await browser.text(".leaflet-control-attribution")?.contains("Tiles: the test's fixture") == true
            )
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
            // Its trip or standing, the limit in force, and silent by the page's clock (its fixes are days old).
            #expect(card.contains(/Trip\s+((on a trip|moving) since |standing)/), "\(card)")
            #expect(card.contains(/Speed\s+limit 30\.0 m\/s \(108 km\/h\)/), "\(card)")
            #expect(card.contains(/Liveness\s+silent since .+ \(silent after 600 s\)/), "\(card)")

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
            // Found by its id, the device is shown at street scale, labelled by name.
            try await browser.type("device-3\u{E007}", into: "#search")
            try await browser.waitUntil("device-3's label on the map") {
                try await browser.texts(".device-label").contains("device-3")
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

/// A map tile server for the page test: any `GET` answers with one small PNG, each request logged to its standard
/// error.
struct TileFixture {
    let server: BackgroundProcess
    let port: Int

    init() throws {
        port = try freeLocalPort()
        let script = """
            import http.server, struct, sys, zlib
            def chunk(kind, data):
                return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
            rows = b"".join(b"\\x00" + b"\\xcc\\xdd\\xee" * 256 for _ in range(256))
            png = (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0))
                   + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
            class Tiles(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Content-Length", str(len(png)))
                    self.end_headers()
                    self.wfile.write(png)
            http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Tiles).serve_forever()
            """
        server = try BackgroundProcess("/usr/bin/env", ["python3", "-c", script, "\(port)"])
    }
}
