import Crypto
import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing
import Worker

/// What goes in and comes out of `geoworker run`: bad input, the message contract, another client's view.
@Suite("geoworker run: input and output", .serialized, .timeLimit(.minutes(10)))
struct ServiceInputTests {
    /// A message the worker must refuse, and the reason it must give.
    struct Malformed {
        let isCommand: Bool
        let value: [UInt8]?
        let reason: String
        /// Whether the schema must refuse it too (every JSON object the decoder refuses).
        var isJSONObject: Bool {
            guard let value, let object = try? JSONSerialization.jsonObject(with: Data(value)) else { return false }
            return object is [String: Any]
        }

        init(command: Bool = false, _ text: String, _ reason: String) {
            self.init(command: command, bytes: Array(text.utf8), reason)
        }

        init(command: Bool = false, bytes: [UInt8]?, _ reason: String) {
            isCommand = command
            value = bytes
            self.reason = reason
        }
    }

    static let malformed: [Malformed] = [
        Malformed(#"{"deviceId":"device-1","lat":48.5"#, "invalid-json"),
        Malformed(bytes: [0xFF, 0xFE, 0x00, 0x7B], "invalid-json"),
        Malformed("[1,2,3]", "not-an-object"),
        Malformed("null", "not-an-object"),
        Malformed(#"{"lat":48.5,"lon":7.7,"timestamp":1795300000000}"#, "missing-field"),
        Malformed(#"{"deviceId":"device-1","lat":123,"lon":7.7,"timestamp":1795300000000}"#, "invalid-field"),
        Malformed(#"{"deviceId":"device-1","lat":48.5,"lon":"7.7","timestamp":1795300000000}"#, "invalid-field"),
        Malformed(#"{"deviceId":"device-1","lat":48.5,"lon":7.7,"timestamp":"yesterday"}"#, "invalid-field"),
        Malformed(
            #"{"deviceId":"device-1","lat":48.5,"lon":7.7,"timestamp":1795300000000,"languages":["fr BE"]}"#,
            "invalid-field"
        ),
        Malformed(
            #"{"deviceId":"\#(String(repeating: "x", count: 300))","lat":48.5,"lon":7.7,"timestamp":1795300000000}"#,
            "invalid-field"
        ),
        Malformed(bytes: [], "empty-message"),
        Malformed(bytes: nil, "empty-message"),
        Malformed(command: true, #"{"type":"teleport","deviceId":"device-1"}"#, "unknown-command"),
        Malformed(command: true, #"{"type":"track","deviceId":"device-1"}"#, "missing-field"),
        Malformed(
            command: true,
            #"{"type":"track","deviceId":"device-1","pin":{"id":"x","lat":48.5,"lon":7.7,"radius":0}}"#,
            "invalid-field"
        ),
        Malformed(command: true, #"{"type":"untrack","deviceId":"device-1"}"#, "missing-field"),
        Malformed(command: true, "{}", "missing-field"),
    ]

    @Test("malformed messages of every kind go to the dead-letter topic as they came; the valid events are unaffected")
    func deadLetters() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        let bad = Self.malformed.enumerated().map { index, malformed in
            ProducerRecord(
                topic: malformed.isCommand ? bed.topics.commands : bed.topics.positions,
                key: Array("device-\(index % 10)".utf8),
                value: malformed.value,
                timestampMilliseconds: BorderTraffic.start + Int64(index) * 10_000 + 5
            )
        }
        let positions = traffic.positions()
        try await bed.produce(traffic.commands() + positions.prefix(150) + bad + positions.dropFirst(150))
        let run = try await bed.runUntilCaughtUp()

        let letters = try await bed.readAll(bed.topics.deadLetters, partitions: 1)
        #expect(letters.count == Self.malformed.count)
        // In the log too, where an operator looks first: how many, why, and where the latest was read.
        let logged = run.errors.split(separator: "\n").filter { $0.contains("sent to the dead-letter topic") }
        let counted = logged.compactMap { $0.firstMatch(of: /dead_lettered=(\d+)/).flatMap { Int($0.1) } }
        #expect(counted.reduce(0, +) == Self.malformed.count, "\(logged)")
        #expect(logged.allSatisfy { $0.contains("origin=") && $0.contains("reasons=") }, "\(logged)")

        // The same valid traffic alone, in a cluster of its own, gives the same events (ids aside: they name
        // input offsets, which the bad messages shift).
        let clean = try ServiceTestBed()
        let cleanTraffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: clean.topics)
        try await clean.produce(cleanTraffic.commands() + cleanTraffic.positions())
        try await clean.runUntilCaughtUp()
        let events = try await bed.events()
        #expect(events.count == 120, "per device: 8 of countries and pins, and its first region and time zone")
        #expect(Set(try events.map(withoutID)) == Set(try await clean.events().map(withoutID)))
    }

    @Test("messages of 1.5, 2 and 5 MB and a 100 KB key are dead-lettered truncated; the worker goes on, unaffected")
    func oversizedDeadLetters() async throws {
        // The valid traffic on partitions 0 to 3, the large messages alone on 4 and 5: the mock broker keeps
        // only about 5 MB per partition and would drop older messages to make room.
        func pinned(_ records: [ProducerRecord]) -> [ProducerRecord] {
            records.map { record in
                var pinned = record
                let device = Int(String(decoding: record.key ?? [], as: UTF8.self).dropFirst("device-".count)) ?? 0
                pinned.partition = Int32(device % 4)
                return pinned
            }
        }
        func bytes(_ count: Int, seed: Int) -> [UInt8] {
            (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) &+ seed) }
        }
        func letters(_ count: Int, seed: Int) -> [UInt8] {
            (0..<count).map { UInt8(97 + (($0 &* 7) &+ seed) % 26) }
        }
        // Eight dead letters of up to 1 MB: more than one dead-letter partition of the mock could keep.
        let bed = try ServiceTestBed(partitions: 6, deadLetterPartitions: 4)
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        var large: [ProducerRecord] = []
        for (index, topic) in [bed.topics.positions, bed.topics.commands].enumerated() {
            large += [
                ProducerRecord(
                    topic: topic,
                    partition: 4,
                    key: Array("device-1".utf8),
                    value: bytes(1_500_000, seed: index)
                ),
                ProducerRecord(
                    topic: topic,
                    partition: 4,
                    key: Array("device-2".utf8),
                    value: bytes(2_000_000, seed: index)
                ),
                ProducerRecord(topic: topic, partition: 4, key: letters(100_000, seed: index), value: Array("{".utf8)),
                ProducerRecord(
                    topic: topic,
                    partition: 5,
                    key: Array("device-3".utf8),
                    value: bytes(5_000_000, seed: index)
                ),
            ]
        }
        let positions = pinned(traffic.positions())
        try await bed.produce(
            pinned(traffic.commands()) + positions.prefix(150) + large + positions.dropFirst(150),
            properties: ["message.max.bytes": "10000000"]
        )
        try await bed.runUntilCaughtUp()

        let deadLetters = try await bed.readAll(bed.topics.deadLetters, partitions: 4)
        #expect(deadLetters.count == large.count)
        let limits = DeadLetter.Limits()
        for original in large {
            let value = original.value ?? []
            let key = original.key ?? []
            let keptValue = Array(value.prefix(limits.maxValueBytes))
            let keptKey = String(decoding: key.prefix(limits.maxKeyBytes), as: UTF8.self)
            let letter = deadLetters.first { letter in
                let sameTopic = letter.headers["geoworker-origin"]?.hasPrefix(original.topic + ":") == true
                return sameTopic && letter.value == keptValue && letter.key == keptKey
            }
            let found = try #require(letter, "the dead letter of \(value.count) bytes keyed with \(key.count) bytes")
            #expect(found.headers["geoworker-reason"] == "invalid-json")
            if value.count > limits.maxValueBytes {
                #expect(found.headers["geoworker-truncated"] == "true")
                #expect(found.headers["geoworker-original-size"] == "\(value.count)")
                #expect(found.headers["geoworker-original-sha256"] == Self.sha256(value))
            } else {
                #expect(found.headers["geoworker-truncated"] == nil)
            }
            if key.count > limits.maxKeyBytes {
                #expect(found.headers["geoworker-key-truncated"] == "true")
                #expect(found.headers["geoworker-original-key-size"] == "\(key.count)")
                #expect(found.headers["geoworker-original-key-sha256"] == Self.sha256(key))
            }
        }

        // Every input partition was processed to its end and committed, the large ones included.
        var ends: [TopicPartition: Int64] = [:]
        for topic in [bed.topics.positions, bed.topics.commands] {
            for partition in Int32(0)..<6 {
                ends[TopicPartition(topic, partition)] = try await bed.messageCount(topic, partition: partition)
            }
        }
        let group = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bed.cluster.bootstrapServers, groupId: bed.group),
            subscription: .partitions([:]),
            logger: ServiceTestBed.logger
        )
        #expect(try await group.committedOffsets(for: Array(ends.keys)) == ends.filter { $0.value > 0 })
        await group.close()

        // The same valid traffic alone gives exactly the same events, ids included (same partitions and offsets).
        let clean = try ServiceTestBed(partitions: 6)
        let cleanTraffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: clean.topics)
        try await clean.produce(pinned(cleanTraffic.commands()) + pinned(cleanTraffic.positions()))
        try await clean.runUntilCaughtUp()
        let events = try await bed.events()
        #expect(events.count == 120, "per device: 8 of countries and pins, and its first region and time zone")
        // Event ids name the input topic; the clean run's topics have other names.
        let cleanEvents = try await clean.events().map {
            $0.json.replacingOccurrences(of: clean.topics.positions, with: bed.topics.positions)
                .replacingOccurrences(of: clean.topics.commands, with: bed.topics.commands)
        }
        #expect(Set(events.map(\.json)) == Set(cleanEvents))
    }

    static func sha256(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
    }

    @Test("every message produced and every event emitted validates against Schemas/; refused messages do not")
    func schemas() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 5, positionsPerDevice: 30, topics: bed.topics)
        let commands =
            traffic.commands() + [
                ProducerRecord(
                    topic: bed.topics.commands,
                    key: Array("device-0".utf8),
                    value: Array(#"{"type":"untrack","deviceId":"device-0","pinId":"customer"}"#.utf8),
                    timestampMilliseconds: BorderTraffic.start + 100_000
                ),
                ProducerRecord(
                    topic: bed.topics.commands,
                    key: Array("device-1".utf8),
                    value: Array(#"{"type":"untrackAll","deviceId":"device-1"}"#.utf8),
                    timestampMilliseconds: BorderTraffic.start + 100_000
                ),
            ]
        let positions = traffic.positions()
        try await bed.produce(commands + positions)
        try await bed.runUntilCaughtUp()
        let events = try await bed.events()
        #expect(
            Set(events.map(\.type)) == [
                "geofence.entered", "geofence.exited", "country.changed", "language.suggested", "region.changed",
                "timezone.changed",
            ]
        )

        var lines = positions.map { "position\t" + String(decoding: $0.value ?? [], as: UTF8.self) }
        lines += commands.map { "command\t" + String(decoding: $0.value ?? [], as: UTF8.self) }
        lines += events.map { "event\t" + $0.json }
        let valid = try await ServiceTestBed.validate(lines)
        #expect(valid.status == 0, "\(valid.output)")
        #expect(valid.output.contains("validated \(lines.count) messages"))
        try await bed.expectProducedMessagesMatchAsyncAPI()

        let refused = Self.malformed.filter(\.isJSONObject).map {
            ($0.isCommand ? "command\t" : "position\t") + String(decoding: $0.value!, as: UTF8.self)
        }
        let invalid = try await ServiceTestBed.validate(refused)
        #expect(invalid.status == 1)
        let problemLines = Set(invalid.output.split(separator: "\n").compactMap { $0.firstMatch(of: /^line (\d+)/)?.1 })
        #expect(problemLines.count == refused.count, "each refused message breaks the schema too: \(invalid.output)")
    }

    @Test(
        "a device whose commands and positions arrive on different partition numbers, or without a key, keeps one state on several apply threads"
    )
    func devicesOutsideTheirPair() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 12, positionsPerDevice: 30, topics: bed.topics)
        let partitions = Int32(bed.partitions)
        // As if commands and positions were produced with different partitioners: device d's commands in
        // partition d mod 4, its positions in the next one; devices 0-2 send their positions without a key.
        let commands = traffic.commands().enumerated().map { index, record in
            var record = record
            record.partition = Int32(index / 2) % partitions
            return record
        }
        try await bed.produce(commands)
        try await bed.runUntilCaughtUp()
        let positions = traffic.positions().enumerated().map { index, record in
            let device = index / traffic.positionsPerDevice
            var record = record
            record.partition = Int32(device + 1) % partitions
            if device < 3 { record.key = nil }
            return record
        }
        try await bed.produce(positions)
        try await bed.runUntilCaughtUp()

        // The devices (with their pins) were stored by the first run and found again by the second, on the
        // apply thread their positions went to: every device entered and left both of its pins.
        let events = try await bed.events()
        for device in 0..<traffic.devices {
            let types = events.filter { $0.subject == traffic.deviceId(device) }.map(\.type)
            #expect(types.filter { $0 == "geofence.entered" }.count == 2, "device \(device): \(types)")
            #expect(types.filter { $0 == "geofence.exited" }.count == 2, "device \(device): \(types)")
            #expect(types.filter { $0 == "country.changed" }.count == 2, "device \(device): \(types)")
        }
    }

    @Test("a track produced before a position is applied before it when the commands partition answers seconds late")
    func trackBeforePositionBehindSlowBroker() async throws {
        let bed = try ServiceTestBed(partitions: 1, brokers: 2)
        // Everything on broker 1 but the commands partition, on broker 2, which will answer 1.5 s late: the
        // positions partition's first fetch comes back long before the commands partition's.
        for topic in [bed.topics.positions, bed.topics.events, bed.topics.deadLetters] {
            try bed.cluster.setLeader(of: topic, partition: 0, to: 1)
        }
        try bed.cluster.setLeader(of: bed.topics.commands, partition: 0, to: 2)
        try bed.cluster.setCoordinator(ofGroup: bed.group, to: 1)
        let time: Int64 = 1_795_300_000_000
        func record(_ topic: String, _ json: String, at time: Int64) -> ProducerRecord {
            ProducerRecord(topic: topic, key: Array("van-9".utf8), value: Array(json.utf8), timestampMilliseconds: time)
        }
        try await bed.produce([
            record(
                bed.topics.commands,
                #"{"type":"track","deviceId":"van-9","pin":{"id":"depot","lat":48.58,"lon":7.75,"radius":300}}"#,
                at: time - 1000
            ),
            record(
                bed.topics.positions,
                #"{"deviceId":"van-9","lat":48.58,"lon":7.75,"timestamp":\#(time)}"#,
                at: time
            ),
            record(
                bed.topics.positions,
                #"{"deviceId":"van-9","lat":48.60,"lon":7.75,"timestamp":\#(time + 10_000)}"#,
                at: time + 10_000
            ),
        ])
        try bed.cluster.setRoundTripDelay(of: 2, to: .milliseconds(1500))
        try await bed.runUntilCaughtUp()

        // The track went first: the first position entered the pin and the second left it. Applied after
        // the positions, the track would have found the van outside and announced nothing.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func text(_ milliseconds: Int64) -> String {
            formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        }
        let geofence = try await bed.events().filter { $0.type.hasPrefix("geofence.") }
        #expect(geofence.map(\.type) == ["geofence.entered", "geofence.exited"])
        #expect(geofence.map(\.time) == [text(time), text(time + 10_000)])
    }

    @Test("kcat, an independent client, reads the events with the device id as key and the CloudEvents header")
    func kcatReadsEvents() async throws {
        let bed = try ServiceTestBed(partitions: 2)
        let traffic = BorderTraffic(devices: 4, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        try await bed.runUntilCaughtUp()
        let result = try await ChildProcess.run(
            "/usr/bin/kcat",
            [
                "-b", bed.cluster.bootstrapServers, "-C", "-t", bed.topics.events, "-o", "beginning", "-e", "-q",
                "-f", "%k\t%h\t%s\n",
            ]
        )
        #expect(result.status == 0, "\(result.errors)")
        let lines = result.output.split(separator: "\n").map {
            $0.split(separator: "\t", maxSplits: 2).map(String.init)
        }
        #expect(lines.count == 48)
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line[2].utf8)) as? [String: Any]
            #expect(object?["subject"] as? String == line[0])
            #expect(line[1] == "content-type=application/cloudevents+json; charset=UTF-8")
        }
    }

    private func withoutID(_ event: ServiceTestBed.Event) throws -> String {
        var object = try #require(try JSONSerialization.jsonObject(with: Data(event.json.utf8)) as? [String: Any])
        object["id"] = nil
        return String(
            decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]),
            as: UTF8.self
        )
    }
}
