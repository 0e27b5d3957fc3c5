import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// What an operator sees of the devices a running `geoworker run` holds: the status card, the map's device
/// list and the live event stream on the operations port, and who may see them.
@Suite("geoworker run: device endpoints", .serialized, .timeLimit(.minutes(10)))
struct ServiceDeviceEndpointsTests {
    @Test("device endpoints are off unless enabled; /metrics, /health and /ready never show device data")
    func offByDefault() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 4, positionsPerDevice: 10, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let (child, port) = try await startServing(bed, [], untilConsumed: 40)
        for path in ["devices/device-1", "map/devices", "events/stream", "", "map/countries"] {
            let answer = try await get(port, path)
            #expect(answer.status == 404, "\(path)")
            #expect(answer.body.contains("http.devices=true"), "\(path): \(answer.body)")
        }
        for path in ["metrics", "health", "ready"] {
            let body = try await get(port, path).body
            #expect(!body.contains("device-1") && !body.contains("48.56"), "\(path) shows device data")
        }
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }

    @Test(
        "the status card: last fix, country and its status (current, then cached after a restart), language, every pin; an unknown device answers 404 saying so"
    )
    func statusCard() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 4, positionsPerDevice: 10, topics: bed.topics)
        // A third pin around device-2's last position, which it enters with its last fix.
        let destination = ProducerRecord(
            topic: bed.topics.commands,
            key: Array("device-2".utf8),
            value: Array(
                #"{"type":"track","deviceId":"device-2","pin":{"id":"destination","lat":48.567,"lon":7.96,"radius":500,"dwellSeconds":600}}"#
                    .utf8
            ),
            timestampMilliseconds: BorderTraffic.start - 1000
        )
        try await bed.produce(traffic.commands() + [destination] + traffic.positions())
        var (child, port) = try await startServing(bed, ["--http-devices"], untilConsumed: 40)
        let card = try await get(port, "devices/device-2")
        #expect(card.status == 200, "\(card.body)")
        #expect(card.contentType == "application/json")
        try await expectValid("device-status", card.body)
        var object = try Self.object(card.body)
        #expect(object["deviceId"] as? String == "device-2")
        let lastFix = try #require(object["lastFix"] as? [String: Any])
        #expect((lastFix["lon"] as? Double).map { abs($0 - 7.96) < 1e-9 } == true, "the last position")
        #expect(lastFix["timestamp"] as? String == "2026-11-21T22:28:10.000Z")
        var country = try #require(object["country"] as? [String: Any])
        #expect(country["code"] as? String == "DE")
        #expect(country["name"] as? String == "Germany")
        #expect(country["status"] as? String == "current")
        let suggestion = try #require(object["suggestedLanguage"] as? [String: Any])
        #expect(suggestion["language"] as? String == "de-DE")
        let pins = try #require(object["pins"] as? [[String: Any]])
        #expect(
            pins.compactMap { ($0["pin"] as? [String: Any])?["id"] as? String } == ["depot", "customer", "destination"]
        )
        #expect(pins.compactMap { $0["state"] as? String } == ["outside", "outside", "inside"])
        #expect(pins[1]["since"] as? String == "2026-11-21T22:28:00.000Z", "left the customer at step 8")
        #expect(pins[2]["since"] as? String == "2026-11-21T22:28:10.000Z")
        #expect(pins[2]["insideSeconds"] as? Int == 0)
        let dwell = try #require(pins[2]["dwell"] as? [String: Any])
        #expect(dwell["seconds"] as? Int == 600 && dwell["announced"] as? Bool == false)

        // This instance holds every partition: an id it never saw is unknown, not elsewhere.
        let unknown = try await get(port, "devices/nobody-here")
        #expect(unknown.status == 404)
        let partition = KeyPartitioner.librdkafka.partition(
            of: Array("nobody-here".utf8),
            partitionCount: bed.partitions
        )
        #expect(unknown.body.contains("is unknown"), "\(unknown.body)")
        #expect(unknown.body.contains("input partition (\(partition) of 4)"), "\(unknown.body)")

        // Restarted on its store: the card is what was stored, not yet confirmed by a fix.
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
        child = try bed.start(["--http-devices"])
        port = try await listeningPort(of: child)
        try await waitUntil("ready") { try await get(port, "ready").status == 200 }
        var restarted = try await get(port, "devices/device-2")
        try await waitUntil("the device's partition is assigned") {
            restarted = try await get(port, "devices/device-2")
            return restarted.status == 200
        }
        object = try Self.object(restarted.body)
        country = try #require(object["country"] as? [String: Any])
        #expect(country["status"] as? String == "cached", "\(restarted.body)")
        #expect(
            (object["pins"] as? [[String: Any]])?.compactMap { $0["state"] as? String } == [
                "outside", "outside", "inside",
            ]
        )

        try await bed.produce([traffic.position(2, step: 10)])
        try await waitUntil("the new fix is applied") {
            let body = try await get(port, "devices/device-2").body
            return (try Self.object(body)["country"] as? [String: Any])?["status"] as? String == "current"
        }
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }

    @Test(
        "two instances in a group: each device's card comes from the instance holding it; the other names its partition"
    )
    func cardsAcrossInstances() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 12, positionsPerDevice: 5, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let first = try bed.start(["--http-devices"], as: ServiceScaleOutTests.member(bed, "a"))
        let second = try bed.start(["--http-devices"], as: ServiceScaleOutTests.member(bed, "b"))
        let ports = [try await listeningPort(of: first), try await listeningPort(of: second)]
        // Both members hold two of the four partition pairs once the group has settled.
        try await ServiceScaleOutTests.waitForLog(first, "assigned 4 partitions")
        try await ServiceScaleOutTests.waitForLog(second, "assigned 4 partitions")
        try await waitUntil("every position applied") {
            var devices = 0
            for port in ports {
                let body = try await get(port, "map/devices").body
                devices += (try Self.object(body)["inView"] as? Int) ?? 0
            }
            return devices == 12
        }
        for device in 0..<12 {
            let answers = [
                try await get(ports[0], "devices/device-\(device)"),
                try await get(ports[1], "devices/device-\(device)"),
            ]
            let holders = answers.filter { $0.status == 200 }
            #expect(holders.count == 1, "device-\(device): \(answers.map(\.status))")
            guard let holder = holders.first, let other = answers.first(where: { $0.status == 404 }) else { continue }
            let partition = try #require(try Self.object(holder.body)["partition"] as? Int)
            #expect(other.body.contains("not held by this instance"), "\(other.body)")
            #expect(other.body.contains("input partition \(partition)"), "holder says \(partition): \(other.body)")
        }
        for child in [first, second] { child.send(SIGTERM) }
        for child in [first, second] { _ = await child.waitForExit(timeout: .seconds(20)) }
    }

    @Test("with http.token set: no token and a wrong token get 401, the right one (header or cookie) 200; never logged")
    func bearerToken() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 2, positionsPerDevice: 5, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let token = "s3cret-\(UUID().uuidString)"
        let child = try bed.start(
            ["--log-level", "trace"],
            omitting: ["--log-level"],
            environment: ["GEOWORKER_HTTP_DEVICES": "true", "GEOWORKER_HTTP_TOKEN": token]
        )
        let port = try await listeningPort(of: child)
        try await waitUntilConsumed(port, positions: 10)
        for path in ["devices/device-1", "map/devices", "events/stream"] {
            let none = try await get(port, path)
            #expect(none.status == 401, "\(path)")
            #expect(none.body.contains("Authorization: Bearer"), "\(path): \(none.body)")
            let wrong = try await get(port, path, headers: ["Authorization": "Bearer not-\(token)"])
            #expect(wrong.status == 401, "\(path)")
        }
        #expect(try await get(port, "devices/device-1", headers: ["Authorization": "Bearer \(token)"]).status == 200)
        #expect(try await get(port, "map/devices", headers: ["Cookie": "geoworker_token=\(token)"]).status == 200)
        #expect(try await get(port, "metrics").status == 200, "metrics need no token")
        let login = try await get(port, "")
        #expect(login.status == 401 && login.body.contains("geoworker_token"), "the page asks for the token")
        #expect(!login.body.contains("device-1"))
        #expect(try await get(port, "", headers: ["Cookie": "geoworker_token=\(token)"]).body.contains("EventSource"))
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
        #expect(!child.errors.contains(token), "the token appears in the log")
    }

    @Test("the map's device list: devices in view with their pins, a sample when more than the limit, bad bbox 400")
    func mapDevices() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 12, positionsPerDevice: 10, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let (child, port) = try await startServing(bed, ["--http-devices"], untilConsumed: 120)
        let all = try await get(port, "map/devices?bbox=7,48,8.5,49")
        #expect(all.status == 200, "\(all.body)")
        try await expectValid("device-map", all.body)
        var object = try Self.object(all.body)
        #expect(object["inView"] as? Int == 12 && object["shown"] as? Int == 12 && object["sampled"] as? Bool == false)
        let devices = try #require(object["devices"] as? [[String: Any]])
        #expect(Set(devices.compactMap { $0["deviceId"] as? String }) == Set((0..<12).map { "device-\($0)" }))
        #expect(devices.allSatisfy { ($0["pins"] as? [Any])?.count == 2 })

        object = try Self.object(try await get(port, "map/devices?bbox=7,48,8.5,49&limit=5").body)
        #expect(object["inView"] as? Int == 12 && object["shown"] as? Int == 4 && object["sampled"] as? Bool == true)
        object = try Self.object(try await get(port, "map/devices?bbox=-10,0,0,10").body)
        #expect(object["inView"] as? Int == 0 && (object["devices"] as? [Any])?.isEmpty == true)
        #expect(try await get(port, "map/devices?bbox=7,49,8,48").status == 400, "south above north")
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }

    @Test(
        "the page and its country outlines come from the binary, Leaflet from the host's package; nothing from outside"
    )
    func page() async throws {
        let bed = try ServiceTestBed()
        let child = try bed.start(["--http-devices"])
        let port = try await listeningPort(of: child)
        let page = try await get(port, "")
        #expect(page.status == 200 && page.contentType == "text/html; charset=utf-8")
        for needed in [
            "/lib/leaflet/leaflet.js", "EventSource(\"/events/stream\")", "/map/devices", "/map/countries", "/devices/",
        ] {
            #expect(page.body.contains(needed), "\(needed)")
        }
        // Leaflet and its clusters as Debian's libjs-leaflet packages have them.
        for file in ["leaflet.js", "leaflet.css", "leaflet.markercluster.js", "MarkerCluster.css", "images/layers.png"]
        {
            let served = try await get(port, "lib/leaflet/" + file)
            let installed = FileManager.default.contents(atPath: "/usr/share/javascript/leaflet/" + file)
            #expect(served.status == 200 && installed != nil, "\(file): \(served.status) \(served.body.prefix(200))")
        }
        #expect(try await get(port, "lib/leaflet/..%2F..%2Fetc%2Fpasswd").status == 404)
        #expect(try await get(port, "map/config").body == #"{"attribution":null,"tiles":null}"#)
        #expect(page.body.firstMatch(of: /(https?:)?\/\/[a-z]/) == nil, "an address outside the service")
        let outlines = try await get(port, "map/countries")
        #expect(outlines.status == 200 && outlines.contentType == "application/json")
        let object = try Self.object(outlines.body)
        #expect((object["rings"] as? [Any])?.count ?? 0 > 200)
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }

    @Test("the live stream: a watcher sees each new event as it is sent, all or one device's, as Server-Sent Events")
    func liveStream() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 3, positionsPerDevice: 10, topics: bed.topics)
        let (child, port) = try await Self.startWithCommandsOnly(bed, traffic)
        let everything = try Self.watch(port, "events/stream")
        let deviceOne = try Self.watch(port, "events/stream?device=device-1")
        try await waitUntil("both watchers connected") {
            everything.errors.contains(": geoworker events") && deviceOne.errors.contains(": geoworker events")
        }
        try await bed.produce(traffic.positions())
        try await waitUntilConsumed(port, positions: 30)
        let sent = try await bed.events()
        #expect(sent.count > 3)
        try await waitUntil("every event streamed") {
            everything.errors.components(separatedBy: "event: device-event").count - 1 == sent.count
        }
        let lines = everything.errors.split(separator: "\n").filter { $0.hasPrefix("data: {") }
        #expect(Set(lines.map { String($0.dropFirst("data: ".count)) }) == Set(sent.map(\.json)))
        let validation = try await ServiceTestBed.validate(lines.map { "event\t" + $0.dropFirst("data: ".count) })
        #expect(validation.status == 0, "\(validation.output)\(validation.errors)")
        try await waitUntil("device-1's events streamed") {
            deviceOne.errors.components(separatedBy: "event: device-event").count - 1
                == sent.filter { $0.key == "device-1" }.count
        }
        #expect(!deviceOne.errors.contains("\"device-0\"") && !deviceOne.errors.contains("\"device-2\""))
        everything.send(SIGTERM)
        deviceOne.send(SIGTERM)
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }

    @Test("a stream client that stops reading misses events, counted, while the worker goes on unaffected")
    func stalledClient() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 1000, positionsPerDevice: 10, topics: bed.topics)
        let (child, port) = try await Self.startWithCommandsOnly(
            bed,
            traffic,
            environment: [
                "GEOWORKER_HTTP_STREAM_BUFFER": "10", "GEOWORKER_HTTP_RECENT_EVENTS": "0",
                "GEOWORKER_SHUTDOWN_TIMEOUT_MS": "600000",
            ]
        )
        let stalled = try StalledStreamClient(port: port, path: "events/stream")
        try await waitUntil("the stream's watcher connected") {
            try await get(port, "metrics").body.contains("geoworker_event_stream_clients 1")
        }
        try await bed.produce(traffic.positions())
        try await waitUntilConsumed(port, positions: 10000, timeout: .seconds(120))
        let metrics = try await get(port, "metrics").body
        let missed = metrics.firstMatch(of: /geoworker_event_stream_missed_total (\d+)/).flatMap { Int($0.1) }
        #expect((missed ?? 0) > 0, "the stalled client missed events: \(missed.map(String.init) ?? "no metric")")
        #expect(try await bed.messageCount(bed.topics.events, partitions: bed.partitions) > 4000, "all events sent")
        // A stop while the client still hangs on: the worker stops, its stream ends, the process exits. The stop's
        // deadline is ten minutes: a client that held the stop up would keep the process well past the wait below.
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(0), "\(child.errors.suffix(1000))")
        _ = consume stalled
    }

    /// A worker with the device endpoints on, ready, that has applied the traffic's commands and no position
    /// yet (so that every event comes after a stream client connects).
    private static func startWithCommandsOnly(
        _ bed: ServiceTestBed,
        _ traffic: BorderTraffic,
        environment: [String: String] = [:]
    ) async throws -> (BackgroundProcess, Int) {
        try await bed.produce(traffic.commands())
        let child = try bed.start(["--http-devices"], environment: environment)
        let port = try await listeningPort(of: child)
        try await waitUntil("ready") { try await get(port, "ready").status == 200 }
        return (child, port)
    }

    /// curl reading a stream, its output in `errors`.
    private static func watch(_ port: Int, _ path: String) throws -> BackgroundProcess {
        try BackgroundProcess("/usr/bin/env", ["curl", "-sN", "-o", "/dev/stderr", "http://127.0.0.1:\(port)/\(path)"])
    }

    private static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }

    private func expectValid(_ kind: String, _ json: String) async throws {
        let result = try await ServiceTestBed.validate([kind + "\t" + json])
        #expect(result.status == 0, "\(result.output)\(result.errors)")
    }
}

/// A stream client that connects and then reads nothing: its receive window shrinks to a few kilobytes.
struct StalledStreamClient: ~Copyable {
    private let descriptor: Int32

    init(port: Int, path: String) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { throw CocoaError(.fileReadUnknown) }
        let request = Array("GET /\(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
    }

    deinit { close(descriptor) }
}
