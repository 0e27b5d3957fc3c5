import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// Trips and speeding through `geoworker run` on the mock cluster.
@Suite("geoworker run: trips and speeding", .serialized, .timeLimit(.minutes(10)))
struct ServiceActivityTests {
    /// Fleet traffic with stops: each device stands, drives north, parks for 6 minutes, and drives on.
    ///
    /// Even devices report their speed, odd ones leave it to be derived; every fourth drives under the speed limit.
    struct StopAndGo {
        let devices: Int
        let topics: WorkerConfiguration.Topics
        /// A device that sends nothing after its first 200 seconds, never heard from again.
        var quitter: Int?
        static let start: Int64 = 1_795_400_000_000
        /// The settings under test: trips on, a default limit of 28 m/s (device 3 has its own, 20), silent after 2
        /// minutes without a fix (device 5 sends none for three and a half in its first drive).
        static let options = [
            "--set", "trips.enabled=true", "--set", "speed.limitMetersPerSecond=28",
            "--set", "liveness.silentAfterSeconds=120",
        ]

        func deviceId(_ device: Int) -> String { "van-\(device)" }

        /// Every fix of a device: seconds after the start, metres north of its home, its speed.
        func fixes(_ device: Int) -> [(at: Int64, north: Double, speed: Double)] {
            let speed = device % 4 == 3 ? 22.0 : 32.0
            var fixes: [(Int64, Double, Double)] = (0..<5).map { (Int64($0) * 30, Double($0 % 2) * 4, 0) }
            var time: Int64 = 150
            var north = 0.0
            for _ in 0..<30 {
                time += 10
                north += speed * 10
                fixes.append((time, north, speed))
            }
            for _ in 0..<12 {
                time += 30
                fixes.append((time, north + Double(fixes.count % 2) * 3, 0))
            }
            for _ in 0..<10 {
                time += 10
                north += speed * 10
                fixes.append((time, north, speed))
            }
            if device == quitter { return fixes.filter { $0.0 < 200 } }
            return device == 5 ? fixes.filter { !(200..<400).contains($0.0) } : fixes
        }

        /// The positions up to (`before: true`) or from `split` seconds.
        func positions(splitAt split: Int64, before: Bool) -> [ProducerRecord] {
            before ? positions(in: Int64.min..<split) : positions(in: split..<Int64.max)
        }

        /// The positions of the fixes between `seconds` after the start.
        func positions(in seconds: Range<Int64>) -> [ProducerRecord] {
            (0..<devices).flatMap { device in
                fixes(device).filter { seconds.contains($0.at) }.map { fix in
                    let latitude = 45.0 + Double(device) * 0.02 + fix.north / 111_195
                    let time = Self.start + fix.at * 1000
                    let speed = device % 2 == 0 ? #","speed":\#(fix.speed)"# : ""
                    let json =
                        #"{"deviceId":"\#(deviceId(device))","lat":\#(latitude),"lon":5.0,"timestamp":\#(time),"accuracy":6\#(speed)}"#
                    return ProducerRecord(
                        topic: topics.positions,
                        key: Array(deviceId(device).utf8),
                        value: Array(json.utf8),
                        timestampMilliseconds: time
                    )
                }
            }
        }

        /// The records by their timestamps (the devices' fixes interleaved), each device's in their order.
        static func inTimeOrder(_ records: [ProducerRecord]) -> [ProducerRecord] {
            records.enumerated().sorted {
                ($0.element.timestampMilliseconds ?? 0, $0.offset) < ($1.element.timestampMilliseconds ?? 0, $1.offset)
            }.map(\.element)
        }

        func commands() -> [ProducerRecord] {
            [
                ProducerRecord(
                    topic: topics.commands,
                    key: Array(deviceId(3).utf8),
                    value: Array(#"{"type":"setLimits","deviceId":"\#(deviceId(3))","speedLimit":20}"#.utf8),
                    timestampMilliseconds: Self.start - 1000
                )
            ]
        }
    }

    @Test("restarted in the middle of the trips: the events of an uninterrupted run, each once, valid by the contract")
    func restartMidTrip() async throws {
        let bed = try ServiceTestBed()
        let traffic = StopAndGo(devices: 12, topics: bed.topics)
        // Cut mid-drive, with the episodes above the limit under way and not yet announced for some.
        try await bed.produce(traffic.commands() + StopAndGo.inTimeOrder(traffic.positions(splitAt: 175, before: true)))
        try await bed.runUntilCaughtUp(StopAndGo.options)
        let first = try await bed.events()
        try await bed.produce(StopAndGo.inTimeOrder(traffic.positions(splitAt: 175, before: false)))
        try await bed.runUntilCaughtUp(StopAndGo.options)
        let events = try await bed.events()
        let reference = try await bed.referenceEvents(StopAndGo.options)

        #expect(!first.isEmpty, "the first run announced the trips' starts")
        #expect(Set(events.map(\.id)).count == events.count, "nothing announced twice")
        #expect(Set(events.map(\.json)) == Set(reference.map(\.json)), "the same events as one uninterrupted run")
        let types = Dictionary(grouping: events, by: \.type).mapValues(\.count)
        // Two drives each: two starts, one end (the second drive is under way at the end).
        #expect(types["trip.started"] == 2 * traffic.devices)
        #expect(types["trip.ended"] == traffic.devices)
        // Above 28 m/s: the devices driving at 32 m/s (not every fourth), and device 3 at 22 against its own 20; an
        // episode per drive, the first ended by the stop.
        let speeding = (0..<traffic.devices).filter { $0 % 4 != 3 || $0 == 3 }.count
        #expect(types["speed.exceeded"] == 2 * speeding)
        #expect(types["speed.normal"] == speeding)
        #expect(types["device.silent"] == 1 && types["device.resumed"] == 1, "device 5's gap, once each")
        let silent = try #require(events.first { $0.type == "device.silent" })
        #expect(silent.id.hasPrefix("device.silent:\(traffic.deviceId(5)):"))
        let ended = try #require(events.first { $0.type == "trip.ended" && $0.subject == traffic.deviceId(0) })
        #expect(ended.json.contains(#""reason":"parked""#))
        let counts = try await bed.expectProducedMessagesMatchAsyncAPI()
        #expect((counts["events"] ?? 0) >= events.count)

        // The card of a device on its second drive, above its own limit: what it is doing, by the contract.
        let (child, port) = try await startServing(bed, ["--http-devices"] + StopAndGo.options, untilConsumed: 0)
        defer { child.send(SIGKILL) }
        // Once the instance holds the device's partition (the mock assigns a new group's partitions after ~3 s).
        try await waitUntil("the card is served") {
            try await get(port, "devices/\(traffic.deviceId(3))").status == 200
        }
        let card = try await get(port, "devices/\(traffic.deviceId(3))")
        #expect(card.status == 200, "\(card.body)")
        let validation = try await ServiceTestBed.validate(["device-status\t" + card.body])
        #expect(validation.status == 0, "\(validation.output)\(validation.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(card.body.utf8)) as? [String: Any])
        let activity = try #require(object["activity"] as? [String: Any], "\(card.body)")
        #expect((activity["trip"] as? [String: Any])?["announced"] as? Bool == true, "\(card.body)")
        #expect((activity["speeding"] as? [String: Any])?["announced"] as? Bool == true, "\(card.body)")
        #expect((activity["limits"] as? [String: Any])?["speedLimitInForce"] as? Double == 20, "\(card.body)")
    }

    @Test("a device never heard from again: silent once, when the other devices' messages pass its deadline; not again")
    func neverHeardFromAgain() async throws {
        let bed = try ServiceTestBed()
        var traffic = StopAndGo(devices: 12, topics: bed.topics)
        let quitter = try Self.quitter(of: &traffic, on: bed)
        // In time order, as a fleet's devices send them: a device's fixes produced after the stream passed them would
        // be heard late, and silent only once the stream moved on from when they came.
        try await bed.produce(
            traffic.commands() + StopAndGo.inTimeOrder(traffic.positions(splitAt: 10_000, before: true))
        )
        try await bed.runUntilCaughtUp(StopAndGo.options)
        let first = try await bed.events()
        // Started again on its state with nothing new: the silence is in the device's state, not announced again.
        try await bed.runUntilCaughtUp(StopAndGo.options)
        let events = try await bed.events()
        let reference = try await bed.referenceEvents(StopAndGo.options)

        let silences = events.filter { $0.type == "device.silent" && $0.subject == traffic.deviceId(quitter) }
        #expect(silences.count == 1, "the quitter is silent once: \(silences.map(\.id))")
        let lastFix = try StopAndGo.start + #require(traffic.fixes(quitter).last).at * 1000
        #expect(silences.first?.id == "device.silent:\(traffic.deviceId(quitter)):\(lastFix)")
        #expect(silences.first?.json.contains(#""silentAfterSeconds":120"#) == true, "\(silences.first?.json ?? "")")
        #expect(!events.contains { $0.type == "device.resumed" && $0.subject == traffic.deviceId(quitter) })
        #expect(first.count == events.count, "the second run announced nothing")
        #expect(Set(events.map(\.json)) == Set(reference.map(\.json)), "the same events as one run from scratch")
        #expect(try await bed.expectProducedMessagesMatchAsyncAPI()["events"] ?? 0 >= events.count)
    }

    @Test("a backfill produced device by device: no device silent for the others' later fixes; a gap in its own is")
    func backfillDeviceByDevice() async throws {
        let bed = try ServiceTestBed()
        let traffic = StopAndGo(devices: 12, topics: bed.topics)
        // Each device's whole day after the one before it on the partition: the stream's time is at the day's end
        // when the next device's first fix comes.
        try await bed.produce(traffic.commands() + traffic.positions(splitAt: 10_000, before: true))
        try await bed.runUntilCaughtUp(StopAndGo.options)
        let events = try await bed.events()
        let silences = events.filter { $0.type == "device.silent" }
        #expect(silences.map(\.subject) == [traffic.deviceId(5)], "device 5's own gap only: \(silences.map(\.id))")
        #expect(events.filter { $0.type == "device.resumed" }.map(\.subject) == [traffic.deviceId(5)])
        #expect(Set(events.map(\.json)) == Set(try await bed.referenceEvents(StopAndGo.options).map(\.json)))
    }

    @Test("a device alone on a partition that then receives nothing: silent by the wall clock once it is idle, counted")
    func aloneOnAQuietPartition() async throws {
        let bed = try ServiceTestBed()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        func fix(at time: Int64) -> ProducerRecord {
            let json = #"{"deviceId":"lone-1","lat":45.1,"lon":5.0,"timestamp":\#(time),"accuracy":6}"#
            return ProducerRecord(
                topic: bed.topics.positions,
                key: Array("lone-1".utf8),
                value: Array(json.utf8),
                timestampMilliseconds: time
            )
        }
        // Its last fix five minutes ago, a minute's threshold: nothing else on the partition moves its stream time.
        try await bed.produce([fix(at: now - 320_000), fix(at: now - 310_000), fix(at: now - 300_000)])
        let options = ["--set", "liveness.silentAfterSeconds=60", "--set", "liveness.idlePartitionSeconds=2"]
        let (child, port) = try await startServing(bed, options, untilConsumed: 3)
        defer { child.send(SIGKILL) }
        // Each look reads the events topic: a second apart, half a minute at most.
        func waitForEvent(_ type: String) async throws -> Bool {
            var budget = WaitBudget(.seconds(30), lookingEvery: .seconds(1))
            while budget.allowsAnotherLook() {
                if try await bed.events().contains(where: { $0.type == type }) { return true }
                try await Task.sleep(for: .seconds(1))
            }
            return false
        }
        try #require(try await waitForEvent("device.silent"), "lone-1 announced silent")
        let metrics = try await get(port, "metrics").body
        #expect(counter("geoworker_silences_by_wall_clock_total", in: metrics) == 1, "\(metrics)")
        // Back: resumed, and the silence announced once.
        try await bed.produce([fix(at: Int64(Date().timeIntervalSince1970 * 1000))])
        try #require(try await waitForEvent("device.resumed"), "lone-1 resumed")
        await ServiceScaleOutTests.stop(child)
        let events = try await bed.events()
        #expect(events.filter { $0.type == "device.silent" }.map(\.id) == ["device.silent:lone-1:\(now - 300_000)"])
        #expect(events.filter { $0.type == "device.resumed" }.count == 1)
    }

    /// Makes one of `traffic`'s devices quit, and returns it.
    ///
    /// One whose partition other devices keep sending on: their messages carry the stream's time past its deadline.
    static func quitter(of traffic: inout StopAndGo, on bed: ServiceTestBed) throws -> Int {
        let quitter = try #require(
            (6..<12).first { quitter in
                (0..<6).contains { partition(of: $0, traffic, bed) == partition(of: quitter, traffic, bed) }
            },
            "a partition with a device that quits and one that does not"
        )
        traffic.quitter = quitter
        return quitter
    }

    /// The input partition of a device's messages (the partitioner the bed's producer uses).
    static func partition(of device: Int, _ traffic: StopAndGo, _ bed: ServiceTestBed) -> Int32 {
        KeyPartitioner.librdkafka.partition(of: Array(traffic.deviceId(device).utf8), partitionCount: bed.partitions)
    }

    @Test("a failover while a device is silent: the instance that takes its partition does not announce it again")
    func failoverDuringSilence() async throws {
        let bed = try ServiceTestBed()
        var traffic = StopAndGo(devices: 12, topics: bed.topics)
        let quitter = try Self.quitter(of: &traffic, on: bed)
        let partition = Self.partition(of: quitter, traffic, bed)
        let members = try ["a", "b"].map { try bed.start(StopAndGo.options, as: ServiceScaleOutTests.member(bed, $0)) }
        defer { for member in members { member.send(SIGKILL) } }
        try await ServiceFencingTests.waitForSettledGroup(members, total: 2 * bed.partitions)

        // The quitter's silence announced by the instance that holds it...
        try await bed.produce(traffic.commands() + StopAndGo.inTimeOrder(traffic.positions(in: 0..<500)))
        var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(200))
        func announced() async throws -> Bool {
            try await bed.events().contains { $0.type == "device.silent" && $0.subject == traffic.deviceId(quitter) }
        }
        while try await !announced(), budget.allowsAnotherLook() { try await Task.sleep(for: .milliseconds(200)) }
        try #require(try await announced(), "the quitter's silence announced")
        // ... and a checkpoint of its partition after it, which more input brings ...
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        let logged = try await bed.messageCount(changelog, partition: partition)
        try await bed.produce(StopAndGo.inTimeOrder(traffic.positions(in: 500..<600)))
        budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(200))
        while try await bed.messageCount(changelog, partition: partition) <= logged, budget.allowsAnotherLook() {
            try await Task.sleep(for: .milliseconds(200))
        }
        // ... then that instance killed, the other taking its partitions while the quitter stays silent.
        let holder = try #require(members.firstIndex { Self.holds($0, partition, of: bed) }, "who holds the partition")
        members[holder].send(SIGKILL)
        #expect(await members[holder].waitForExit(timeout: .seconds(10)) == .signalled(SIGKILL))
        let survivor = members[1 - holder]
        try await ServiceFencingTests.waitForSettledGroup([survivor], total: 2 * bed.partitions)
        try await bed.produce(StopAndGo.inTimeOrder(traffic.positions(in: 600..<Int64.max)))

        let reference = try await bed.referenceEvents(StopAndGo.options)
        let events = try await ServiceScaleOutTests.waitForAll(bed, reference)
        await ServiceScaleOutTests.stop(survivor)
        let silences = events.filter { $0.type == "device.silent" && $0.subject == traffic.deviceId(quitter) }
        #expect(silences.count == 1, "announced once, by the instance killed: \(silences.map(\.id))")
        #expect(Self.holds(survivor, partition, of: bed), "the survivor took the quitter's partition")
        ServiceScaleOutTests.expectSameEvents(events, as: reference, logs: survivor.errors.suffix(4000).description)
    }

    /// Whether a member's last assignment holds the input partition (its "assigned" line's start offsets).
    static func holds(_ member: BackgroundProcess, _ partition: Int32, of bed: ServiceTestBed) -> Bool {
        let assigned = member.errors.split(separator: "\n").last { $0.contains(ServiceFencingTests.assigned) }
        return assigned?.contains("\(bed.topics.positions)[\(partition)]@") ?? false
    }
}
