import Foundation
import TestSupport
import Testing
import Worker

/// Three `geoworker run` instances of one group, each advertising its operations address (`http.advertisedAddress`),
/// with a bearer token: any of them answers a card, a nearby question and the map for the whole fleet, on both brokers;
/// while an instance stops and its partitions move, the answers say so (503 with a retry hint) and never that a device
/// is unknown.
@Suite("the whole fleet from any instance of a group", .serialized, .timeLimit(.minutes(10)))
struct ServiceGroupAnswersTests {
    static let token = "group-secret"
    static let authorized = ["Authorization": "Bearer \(token)"]

    @Test(
        "cards, nearby and the map from each of three instances; one stops gracefully; the token between them",
        arguments: TestBroker.Kind.allCases
    )
    func threeInstances(_ kind: TestBroker.Kind) async throws {
        let bed = try ServiceTestBed(on: try await TestBroker.start(kind), partitions: 6)
        if case .mock = bed.broker {
            // The mock has no CreateTopics: made here as an operator would; on noida-db the instances create it.
            try bed.broker.createTopic("\(bed.group)-instances", partitions: 1)
        }
        let traffic = BorderTraffic(devices: 30, positionsPerDevice: 6, topics: bed.topics)
        let names = ["a", "b", "c"]
        var instances: [(name: String, child: BackgroundProcess, port: Int)] = []
        defer { for instance in instances { instance.child.send(SIGKILL) } }
        for name in names {
            let child = try bed.start(
                ["--http-devices", "--http-advertised-address", "http://127.0.0.1"],
                as: ServiceScaleOutTests.member(bed, name),
                environment: ["GEOWORKER_HTTP_TOKEN": Self.token]
            )
            instances.append((name, child, try await listeningPort(of: child)))
            // One at a time, as a deployment adds them: each joins a group that has settled.
            try await ServiceScaleOutTests.waitForLog(child, "assigned [1-9]")
        }
        for instance in instances {
            try await Self.waitForDirectory(instance.port, instances: 3, partitions: 6, log: instance.child)
        }
        // The live stream of one instance shows the whole group's events, each once; asked alone, its own.
        let stream = try Self.watch(instances[0].port, "events/stream")
        let ownStream = try Self.watch(instances[0].port, "events/stream?scope=local")
        defer {
            stream.send(SIGTERM)
            ownStream.send(SIGTERM)
        }
        try await waitUntil("the stream's watchers connected") {
            stream.errors.contains(": geoworker events") && ownStream.errors.contains(": geoworker events")
        }
        try await bed.produce(traffic.commands() + traffic.positions())
        let everyDevice = Set((0..<traffic.devices).map(traffic.deviceId))
        try await waitUntil("every position applied across the instances", timeout: .seconds(90)) {
            var consumed = 0
            for instance in instances {
                consumed += counter(
                    "geoworker_positions_consumed_total",
                    in: try await get(instance.port, "metrics").body
                )
            }
            return consumed >= traffic.devices * traffic.positionsPerDevice
        }

        let sent = Set(try await bed.events().map(\.id))
        try await waitUntil("every event of the group streamed by one instance") {
            Self.streamedIds(stream).count >= sent.count
        }
        let streamed = Self.streamedIds(stream)
        #expect(streamed.count == Set(streamed).count, "each event once")
        #expect(Set(streamed) == sent, "\(Set(streamed).symmetricDifference(sent).prefix(5))")
        let own = Self.streamedIds(ownStream)
        #expect(!own.isEmpty && own.count < sent.count, "instance a's own events: \(own.count) of \(sent.count)")

        for instance in instances {
            // Each instance holds a part of the fleet: asked alone, it knows only that part.
            let own = try await Self.nearbyIDs(instance.port, "&scope=local")
            #expect(!own.isEmpty && own.count < everyDevice.count, "\(instance.name) holds \(own.count)")
            // Any instance answers for all of it.
            for device in everyDevice.sorted() {
                let card = try await get(instance.port, "devices/\(device)", headers: Self.authorized)
                #expect(card.status == 200, "\(instance.name), \(device): \(card.status) \(card.body)")
                #expect(card.body.contains("\"deviceId\":\"\(device)\""), "\(instance.name): \(card.body.prefix(300))")
            }
            let nearby = try await Self.json(instance.port, "devices/nearby?lat=48.57&lon=7.8&radius=50000&limit=500")
            #expect(Set(Self.deviceIDs(nearby)) == everyDevice, "\(instance.name): \(nearby)")
            #expect(nearby["complete"] as? Bool == true, "\(instance.name): \(nearby)")
            #expect((nearby["instances"] as? [[String: Any]])?.count == 3, "\(instance.name): \(nearby)")
            let distances = (nearby["devices"] as? [[String: Any]] ?? []).compactMap { $0["distanceMeters"] as? Double }
            #expect(distances == distances.sorted(), "nearest first: \(distances)")
            // The limit applies once, to the merged devices: the nearest five of the whole fleet.
            let nearest = try await Self.json(instance.port, "devices/nearby?lat=48.57&lon=7.8&radius=50000&limit=5")
            #expect(Self.deviceIDs(nearest) == Array(Self.deviceIDs(nearby).prefix(5)), "\(nearest)")
            let map = try await Self.json(instance.port, "map/devices")
            #expect(Set(Self.deviceIDs(map)) == everyDevice, "\(instance.name): \(map)")
            #expect(map["inView"] as? Double == Double(everyDevice.count), "\(map)")
            // Instances ask each other with the group's token: without it, nobody answers, a peer included.
            let open = try await get(instance.port, "devices/nearby?lat=48.57&lon=7.8&radius=50000&scope=local")
            #expect(open.status == 401, "\(open.status) \(open.body)")
            let card = try await get(instance.port, "devices/device-1")
            #expect(card.status == 401, "\(card.status) \(card.body)")
        }

        // c stops gracefully while a and b are asked for every card: its partitions move to them. Meanwhile an answer
        // is a card or a retry hint, never "unknown".
        let stopping = instances[2]
        let remaining = instances.prefix(2).map { (name: $0.name, port: $0.port) }
        let asking = Task { () async -> [String] in
            var unexpected: [String] = []
            var answered = 0
            while !Task.isCancelled {
                for instance in remaining {
                    for device in everyDevice.sorted() {
                        // A question cut short by the end of the wait is no answer.
                        guard let card = try? await get(instance.port, "devices/\(device)", headers: Self.authorized)
                        else { continue }
                        answered += 1
                        let retry = (card.status == 503 || card.status == 504) && card.retryAfter != nil
                        if card.status != 200 && !retry {
                            unexpected.append("\(instance.name) \(device): \(card.status) \(card.body.prefix(300))")
                        }
                    }
                }
            }
            return unexpected + ["answered \(answered)"]
        }
        await ServiceScaleOutTests.stop(stopping.child)
        for instance in instances.prefix(2) {
            try await Self.waitForDirectory(instance.port, instances: 2, partitions: 6, log: instance.child)
        }
        asking.cancel()
        let seen = await asking.value
        #expect(seen.count == 1, "answers while partitions moved: \(seen.prefix(10))")
        for instance in instances.prefix(2) {
            for device in everyDevice.sorted() {
                let card = try await get(instance.port, "devices/\(device)", headers: Self.authorized)
                #expect(card.status == 200, "after c stopped, \(instance.name), \(device): \(card.status) \(card.body)")
            }
            let map = try await Self.json(instance.port, "map/devices")
            #expect(Set(Self.deviceIDs(map)) == everyDevice, "after c stopped, \(instance.name): \(map)")
            #expect((map["instances"] as? [[String: Any]])?.count == 2, "\(map)")
        }
    }

    @Test("an instance the others cannot reach is named in the merged answers, the rest answered; its cards are 504")
    func unreachableInstance() async throws {
        let bed = try ServiceTestBed(partitions: 4)
        try bed.broker.createTopic("\(bed.group)-instances", partitions: 1)
        let traffic = BorderTraffic(devices: 20, positionsPerDevice: 3, topics: bed.topics)
        let environment = ["GEOWORKER_HTTP_TOKEN": Self.token, "GEOWORKER_HTTP_PEER_TIMEOUT_MS": "500"]
        let reachable = try bed.start(
            ["--http-devices", "--http-advertised-address", "http://127.0.0.1"],
            as: ServiceScaleOutTests.member(bed, "a"),
            environment: environment
        )
        defer { reachable.send(SIGKILL) }
        try await ServiceScaleOutTests.waitForLog(reachable, "assigned [1-9]")
        // b advertises an address where nothing listens: a firewall, a wrong setting, a host gone.
        let unreachable = try bed.start(
            ["--http-devices", "--http-advertised-address", "http://127.0.0.1:1"],
            as: ServiceScaleOutTests.member(bed, "b"),
            environment: environment
        )
        defer { unreachable.send(SIGKILL) }
        let port = try await listeningPort(of: reachable)
        try await Self.waitForDirectory(port, instances: 2, partitions: 4, log: reachable)
        try await bed.produce(traffic.commands() + traffic.positions())
        let own = try await Self.waitForLocalDevices(port)

        let nearby = try await Self.json(port, "devices/nearby?lat=48.57&lon=7.8&radius=50000&limit=500")
        #expect(Set(Self.deviceIDs(nearby)) == own, "the reachable instance's devices: \(nearby)")
        #expect(nearby["complete"] as? Bool == false, "\(nearby)")
        let named = (nearby["instances"] as? [[String: Any]] ?? []).filter { $0["answered"] as? Bool == false }
        #expect(named.count == 1 && named.first?["address"] as? String == "http://127.0.0.1:1", "\(nearby)")
        #expect((named.first?["error"] as? String)?.isEmpty == false, "\(named)")
        let map = try await Self.json(port, "map/devices")
        #expect(Set(Self.deviceIDs(map)) == own && map["complete"] as? Bool == false, "\(map)")
        let elsewhere = try #require(
            (0..<traffic.devices).map(traffic.deviceId).first { !own.contains($0) },
            "b holds some devices"
        )
        let card = try await get(port, "devices/\(elsewhere)", headers: Self.authorized)
        #expect(card.status == 504 && card.retryAfter == "1", "\(card.status) \(card.body)")
        #expect(card.body.contains("http://127.0.0.1:1"), "\(card.body)")
    }

    /// Waits until the instance on `port` has applied a fix of some devices and none arrives for a second; returns them.
    static func waitForLocalDevices(_ port: Int) async throws -> Set<String> {
        var seen: Set<String> = []
        var steady = 0
        try await waitUntil("the instance's own devices applied") {
            let now = try await nearbyIDs(port, "&scope=local")
            steady = now == seen && !now.isEmpty ? steady + 1 : 0
            seen = now
            return steady >= 20
        }
        return seen
    }

    /// Waits until the instance on `port` knows `instances` instances holding all `partitions` partitions.
    static func waitForDirectory(_ port: Int, instances: Int, partitions: Int, log: BackgroundProcess) async throws {
        var last = ""
        var shown = false
        var budget = WaitBudget(.seconds(90), lookingEvery: .milliseconds(200))
        while !shown && budget.allowsAnotherLook() {
            let answer = try await get(port, "group", headers: authorized)
            last = answer.body
            if answer.status == 200,
                let group = try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any],
                let members = group["instances"] as? [[String: Any]]
            {
                let held = members.flatMap { $0["partitions"] as? [Int] ?? [] }
                shown =
                    members.count == instances && Set(held) == Set(0..<partitions)
                    && (group["movingPartitions"] as? [Int])?.isEmpty == true
            }
            if !shown { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(shown, "the directory shows no \(instances) instances: \(last)\n\(log.errors.suffix(4000))")
    }

    /// A `curl` reading a Server-Sent Events stream into its standard error, with the group's token.
    static func watch(_ port: Int, _ path: String) throws -> BackgroundProcess {
        try BackgroundProcess(
            "/usr/bin/env",
            [
                "curl", "-sN", "-H", "Authorization: Bearer \(token)", "-o", "/dev/stderr",
                "http://127.0.0.1:\(port)/\(path)",
            ]
        )
    }

    /// The ids of the events a stream carried, in order.
    static func streamedIds(_ stream: BackgroundProcess) -> [String] {
        stream.errors.split(separator: "\n").filter { $0.hasPrefix("data: {") }.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.dropFirst("data: ".count).utf8)) as? [String: Any])?[
                "id"
            ]
                as? String
        }
    }

    static func json(_ port: Int, _ path: String) async throws -> [String: Any] {
        let answer = try await get(port, path, headers: authorized)
        #expect(answer.status == 200, "\(path): \(answer.status) \(answer.body)")
        return try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any] ?? [:]
    }

    static func deviceIDs(_ answer: [String: Any]) -> [String] {
        (answer["devices"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
    }

    static func nearbyIDs(_ port: Int, _ more: String) async throws -> Set<String> {
        Set(deviceIDs(try await json(port, "devices/nearby?lat=48.57&lon=7.8&radius=50000&limit=500" + more)))
    }
}
