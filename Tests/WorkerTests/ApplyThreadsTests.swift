import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import PartitionOffsets
import TestSupport
import Testing

@testable import Worker

/// The shards apply on their own threads while the worker's loop reads and merges the next batch: what the loop
/// queues meanwhile waits for the next round, and a checkpoint may only store the offsets of applied messages.
@Suite("Applying on the shards' threads while the loop reads on", .timeLimit(.minutes(5)))
struct ApplyThreadsTests {
    static let quiet = Logger.quiet("test.shard-application")
    let topics = WorkerConfiguration.Topics(
        positions: "positions",
        commands: "commands",
        events: "events",
        deadLetters: "dl"
    )
    let partition = TopicPartition("positions", 0)
    /// What the shards of a test processed.
    let tally = ProcessingTally()

    func shards() -> ShardedDevices {
        let tracker = DeviceTracker(configuration: TrackerConfiguration(), countries: InputProcessorTests.OneCountry())
        return ShardedDevices(states: [], routing: DeviceRouting(shardCount: 2), tally: tally) {
            InputProcessor(registry: DeviceRegistry(tracker: tracker, states: $0), topics: topics)
        }
    }

    /// Queues positions read from the positions topic's partition 0 as the loop does.
    func enqueue(_ records: some Sequence<ConsumerRecord>, on shards: inout ShardedDevices) {
        for record in records {
            shards.enqueue(
                record,
                kind: .positions,
                origin: MessageOrigin(topic: topics.positions, partition: 0, offset: record.offset, timestamp: 0)
            )
        }
    }

    /// A mock cluster with `topics` (one partition each) and a producer for it.
    func clusterAndProducer(topics: [String]) throws -> (MockCluster, Producer) {
        let cluster = try MockCluster(brokers: 1, logger: Self.quiet)
        for topic in topics { try cluster.createTopic(topic, partitions: 1) }
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: cluster.bootstrapServers),
            logger: Self.quiet
        )
        return (cluster, producer)
    }

    /// A position of each of `devices` devices (six unless told), then `extra` messages (keyed by `extraKeys`, else
    /// device-0), read back from the broker as the worker reads them.
    func consumedPositions(
        _ cluster: MockCluster,
        producer: Producer,
        devices: Int = 6,
        extra: [String] = [],
        extraKeys: [String]? = nil
    ) throws -> [ConsumerRecord] {
        let records =
            (0..<devices).map { device in
                ProducerRecord(
                    topic: topics.positions,
                    partition: 0,
                    key: "device-\(device)",
                    value:
                        #"{"deviceId":"device-\#(device)","lat":48.85,"lon":2.35,"timestamp":1795000000000,"accuracy":5}"#
                )
            }
            + extra.indices.map { index in
                ProducerRecord(
                    topic: topics.positions,
                    partition: 0,
                    key: extraKeys?[index] ?? "device-0",
                    value: extra[index]
                )
            }
        let reports = producer.send(records).wait()
        try #require(reports.allSatisfy { $0.isDelivered })
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupId: "readers"),
            subscription: .partitions([partition: .beginning]),
            logger: Self.quiet
        )
        defer { consumer.close() }
        var consumed: [ConsumerRecord] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while consumed.count < records.count && ContinuousClock.now < deadline {
            consumed += try consumer.poll(timeout: .milliseconds(200))
        }
        try #require(consumed.count == records.count)
        return consumed
    }

    @Test("a round's offsets count once every shard applied it; what is queued meanwhile waits; its time ends then")
    func appliedOffsetsOnly() throws {
        let (cluster, producer) = try clusterAndProducer(topics: [topics.positions, topics.events])
        defer { producer.close() }
        let records = try consumedPositions(cluster, producer: producer)
        var shards = shards()
        let application = ApplyThreads(count: 2)
        let ledger = OffsetLedger(topics: topics, stored: [:])
        let feed = EventFeed(metricsFactory: NOOPMetricsHandler.instance)

        enqueue(records[0..<4], on: &shards)
        let first = application.start(&shards, polledAt: .now, producer: producer, feed: feed)
        ledger.noteReleased([partition: 4], inRound: first)
        // Released, not yet applied: nothing a checkpoint may store.
        #expect(ledger.takeApplied().isEmpty)
        enqueue(records[4..<6], on: &shards)  // the loop's next batch, queued while the shards apply
        application.waitUntilApplied()
        for round in application.takeAppliedRounds() { ledger.noteApplied(throughRound: round.number) }
        #expect(ledger.takeApplied() == [partition: 4])
        #expect(tally.counters.positions == 4)
        #expect(shards.holdings.devices == 4)

        let polledAt = ContinuousClock.now
        let second = application.start(&shards, polledAt: polledAt, producer: producer, feed: feed)
        ledger.noteReleased([partition: 6], inRound: second)
        // The loop polls meanwhile (up to 100 ms on a quiet topic): no part of how long the round took, which ends
        // when its last shard is done, before the loop next looks.
        let deadline = ContinuousClock.now + .seconds(30)
        while !application.hasFinished && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
        let doneWithin = ContinuousClock.now - polledAt
        application.waitUntilApplied()
        let rounds = application.takeAppliedRounds()
        #expect(rounds.map(\.number) == [second])
        let took = try #require(rounds.last?.duration)
        #expect(took <= doneWithin, "the round's time ends with its last shard, not when the loop finishes it")
        #expect(tally.counters.positions == 6)
        // A rewind throws the applied state away, and its offsets with it.
        ledger.noteApplied(throughRound: second)
        ledger.discardUnstored()
        #expect(ledger.takeApplied().isEmpty)

        let changes = application.takeChanges(of: shards)
        #expect(changes.flatMap(\.devices).count == 6)
        let events = changes.flatMap(\.deliveries).flatMap { $0.wait() }
        #expect(!events.isEmpty && events.allSatisfy { $0.isDelivered })
    }

    @Test("a round's stream time reaches every shard, with messages of the round or not: each announces its silences")
    func streamTimeReachesEveryShard() throws {
        let (cluster, producer) = try clusterAndProducer(topics: [topics.positions, topics.events])
        defer { producer.close() }
        // Six devices at one moment, then device-0 alone two minutes later.
        let later = #"{"deviceId":"device-0","lat":48.85,"lon":2.35,"timestamp":1795000120000,"accuracy":5}"#
        let records = try consumedPositions(cluster, producer: producer, extra: [later])
        let tracker = DeviceTracker(
            configuration: TrackerConfiguration(liveness: LivenessRules(silentAfterSeconds: 60)),
            countries: InputProcessorTests.OneCountry()
        )
        // A placement with a device on the shard device-0 is not on (the hash's seed is per process otherwise).
        let routing = try #require(
            (1...64).lazy.map { DeviceRouting(shardCount: 2, hashing: IDHashing(seed: $0)) }.first { routing in
                (1..<6).contains { routing.shard(ofDevice: "device-\($0)") != routing.shard(ofDevice: "device-0") }
            }
        )
        var shards = ShardedDevices(states: [], routing: routing, tally: tally) {
            InputProcessor(registry: DeviceRegistry(tracker: tracker, states: $0), topics: topics)
        }
        let application = ApplyThreads(count: 2)
        let feed = EventFeed(metricsFactory: NOOPMetricsHandler.instance)

        enqueue(records[0..<6], on: &shards)
        _ = application.start(
            &shards,
            polledAt: .now,
            streamAdvances: [StreamClock.Advance(partition: 0, time: 1_795_000_000_000)],
            producer: producer,
            feed: feed
        )
        application.waitUntilApplied()
        #expect(tally.counters.events["device.silent"] == nil)
        // The second round has a message for device-0's shard only; its time passes every deadline.
        enqueue(records[6...], on: &shards)
        _ = application.start(
            &shards,
            polledAt: .now,
            streamAdvances: [StreamClock.Advance(partition: 0, time: 1_795_000_120_000)],
            producer: producer,
            feed: feed
        )
        application.waitUntilApplied()
        // Device-0 by its own fix after the gap (with its resumption), the five others by the round's time.
        #expect(tally.counters.events["device.silent"] == 6)
        #expect(tally.counters.events["device.resumed"] == 1)
        let changes = application.takeChanges(of: shards)
        #expect(changes.flatMap(\.devices).count == 6, "each silent device changed, for the checkpoint")
    }

    @Test("a device's silence is decided by the messages before its next fix, however they were batched into rounds")
    func silenceWhateverTheRounds() throws {
        let start: Int64 = 1_795_000_000_000
        // Six devices at `start`; device-1 two minutes later; device-2's next fix, stamped 50 s after `start`, comes
        // after device-1's on the partition: the stream passed its deadline (60 s) before it.
        let late = [
            #"{"deviceId":"device-1","lat":48.85,"lon":2.35,"timestamp":1795000120000,"accuracy":5}"#,
            #"{"deviceId":"device-2","lat":48.85,"lon":2.35,"timestamp":1795000050000,"accuracy":5}"#,
        ]
        func events(rounds: [Range<Int>]) throws -> [String] {
            let (cluster, producer) = try clusterAndProducer(topics: [topics.positions, topics.events])
            defer { producer.close() }
            let records = try consumedPositions(
                cluster,
                producer: producer,
                extra: late,
                extraKeys: ["device-1", "device-2"]
            )
            let times = Array(repeating: start, count: 6) + [start + 120_000, start + 50_000]
            let tracker = DeviceTracker(
                configuration: TrackerConfiguration(liveness: LivenessRules(silentAfterSeconds: 60)),
                countries: InputProcessorTests.OneCountry()
            )
            var shards = ShardedDevices(states: [], routing: DeviceRouting(shardCount: 2), tally: tally) {
                InputProcessor(registry: DeviceRegistry(tracker: tracker, states: $0), topics: topics)
            }
            let application = ApplyThreads(count: 2)
            let feed = EventFeed(metricsFactory: NOOPMetricsHandler.instance)
            var clock = StreamClock()
            for round in rounds {
                for index in round {
                    shards.enqueue(
                        records[index],
                        kind: .positions,
                        origin: MessageOrigin(
                            topic: topics.positions,
                            partition: 0,
                            offset: Int64(index),
                            timestamp: times[index]
                        ),
                        streamTime: clock.time(of: 0) ?? Int64.min
                    )
                    clock.released(upTo: times[index], partition: 0, at: .now)
                }
                _ = application.start(
                    &shards,
                    polledAt: .now,
                    streamAdvances: clock.takeAdvances(),
                    producer: producer,
                    feed: feed
                )
            }
            application.waitUntilApplied()
            let sent = application.takeChanges(of: shards).flatMap(\.deliveries).flatMap { $0.wait() }
            try #require(sent.allSatisfy { $0.isDelivered })
            return try Self.eventIDs(in: cluster, topic: topics.events).filter { $0.hasPrefix("device.") }.sorted()
        }
        let together = try events(rounds: [0..<6, 6..<8])
        #expect(together == (try events(rounds: [0..<6, 6..<7, 7..<8])))
        #expect(together == (try events(rounds: [0..<3, 3..<7, 7..<8])))
        #expect(
            together.contains { $0.hasSuffix(" device.silent:device-2:\(start)") },
            "before its late fix: \(together)"
        )
        // Its late fix counts from when it came, not from its own time, which the stream passed already.
        #expect(together.filter { $0.hasPrefix("device.silent ") }.count == 6, "\(together)")
        #expect(together.filter { $0.hasPrefix("device.resumed ") }.count == 2, "devices 1 and 2: \(together)")
    }

    /// The types and ids of the events on a topic of the mock cluster (partition 0), read from its beginning.
    static func eventIDs(in cluster: MockCluster, topic: String) throws -> [String] {
        let consumer = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: cluster.bootstrapServers, groupId: "event-readers"),
            subscription: .partitions([TopicPartition(topic, 0): .beginning]),
            logger: Self.quiet
        )
        defer { consumer.close() }
        var ids: [String] = []
        var quiet = 0
        while quiet < 5 {
            let batch = try consumer.poll(timeout: .milliseconds(200))
            quiet = batch.isEmpty ? quiet + 1 : 0
            for record in batch {
                let object = try JSONSerialization.jsonObject(with: Data(record.value ?? []))
                let event = object as? [String: Any]
                if let type = event?["type"] as? String, let id = event?["id"] as? String {
                    ids.append("\(type) \(id)")
                }
            }
        }
        return ids
    }

    @Test(
        "at most roundsInFlight rounds are handed over unapplied: the loop waits before another; offsets count in the rounds' order"
    )
    func roundsInFlight() throws {
        let (cluster, producer) = try clusterAndProducer(topics: [topics.positions, topics.events])
        defer { producer.close() }
        let records = try consumedPositions(cluster, producer: producer, devices: 3000)
        var shards = shards()
        let onShard = Dictionary(grouping: records) { record in
            shards.routing.shard(ofDevice: record.withKey { String(decoding: $0!, as: UTF8.self) })
        }
        let (slow, quick) = (try #require(onShard[0]), try #require(onShard[1]))
        let application = ApplyThreads(count: 2)
        let feed = EventFeed(metricsFactory: NOOPMetricsHandler.instance)
        let (first, second) = (TopicPartition("positions", 0), TopicPartition("positions", 1))
        let inFlight = ApplyThreads.roundsInFlight

        let ledger = OffsetLedger(topics: topics, stored: [:])
        let half = slow.count / 2
        func start(_ records: ArraySlice<ConsumerRecord>, _ offsets: [TopicPartition: Int64]) {
            enqueue(records, on: &shards)
            ledger.noteReleased(
                offsets,
                inRound: application.start(&shards, polledAt: .now, producer: producer, feed: feed)
            )
        }
        func takeApplied() -> [TopicPartition: Int64] {
            for round in application.takeAppliedRounds() { ledger.noteApplied(throughRound: round.number) }
            return ledger.takeApplied()
        }

        // Many messages for shard 0 alone, then one at a time for shard 1: the start that would put more than
        // `inFlight` rounds in hand waits until fewer are being applied, so the first has been by then.
        start(slow[..<half], [first: 1])
        for index in 0..<inFlight { start(quick[index..<index + 1], [second: Int64(index + 1)]) }
        var counted = takeApplied()
        #expect(counted[first] == 1, "round \(inFlight + 1) handed over with the first unapplied")
        application.waitUntilApplied()
        counted.merge(takeApplied()) { $1 }
        #expect(counted == [first: 1, second: Int64(inFlight)])

        // Again many for shard 0, then one for shard 1, idle, so likely applied first: its offsets count only
        // once the round before is applied too.
        start(slow[half...], [first: 2])
        start(quick[inFlight..<inFlight + 1], [second: Int64(inFlight + 1)])
        counted = [:]
        var countedOutOfOrder = false
        let deadline = ContinuousClock.now + .seconds(30)
        while counted[first] == nil && ContinuousClock.now < deadline {
            counted.merge(takeApplied()) { $1 }
            if counted[second] != nil && counted[first] == nil { countedOutOfOrder = true }
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(!countedOutOfOrder, "the second round's offsets counted before the first's")
        application.waitUntilApplied()
        counted.merge(takeApplied()) { $1 }
        #expect(counted == [first: 2, second: Int64(inFlight + 1)])
        #expect(tally.counters.positions == slow.count + inFlight + 1)
    }

    @Test(
        "the shards hand over their changed devices, each once; the checkpoint encodes every one of them"
    )
    func changesTakenFromTheShards() throws {
        let (cluster, producer) = try clusterAndProducer(topics: [topics.positions, topics.events])
        defer { producer.close() }
        let devices = 40
        let records = try consumedPositions(cluster, producer: producer, devices: devices)
        let (shards, application) = applyOneBatch(records, producer: producer)

        let checkpoint = Checkpoint(
            shards: application.takeChanges(of: shards),
            offsets: [:],
            changelog: nil,
            membership: nil
        )
        #expect(checkpoint.devices.count == 2)
        for (shard, states) in zip(shards.shards, checkpoint.devices) {
            #expect(states.count == shard.processor.registry.count)
        }
        let encoded = checkpoint.encodedDevices()
        var runStart = 0
        for states in checkpoint.devices {
            let ids = encoded[runStart..<runStart + states.count].map(\.deviceId)
            #expect(Set(ids) == Set(states.map(\.deviceId)))
            runStart += states.count
        }
        for device in encoded {
            let state = try device.bytes.withUnsafeBytes { try DeviceStateEncoding.decode($0) }
            #expect(state.deviceId == device.deviceId)
            #expect(state.lastFix?.coordinate.latitude == 48.85)
            #expect(state.inputPartition == device.partition)
        }
        #expect(Set(encoded.map(\.deviceId)) == Set((0..<devices).map { "device-\($0)" }))

        // Taken once: the next checkpoint has no device that did not change since.
        let next = Checkpoint(
            shards: application.takeChanges(of: shards),
            offsets: [:],
            changelog: nil,
            membership: nil
        )
        #expect(next.isEmpty)
    }

    @Test(
        "a batch's events reach the events topic and the live feed; its dead letters reach their topic, never the feed"
    )
    func eventsAndDeadLetters() async throws {
        let feed = EventFeed(metricsFactory: NOOPMetricsHandler.instance)
        let watcher = feed.subscribe()
        let reports = try applySixPositionsAndABadMessage(feed: feed)
        feed.close()
        #expect(reports.allSatisfy { $0.isDelivered })
        let sentEvents = reports.filter { $0.topic == topics.events }.count
        // Each of the six devices gets its first country.
        #expect(sentEvents == 6, "\(reports)")
        #expect(reports.filter { $0.topic == topics.deadLetters }.count == 1)
        var watched: [EventFeed.Item] = []
        for await item in watcher.items { watched.append(item) }
        #expect(watched.count == sentEvents)
        #expect(watched.allSatisfy { String(decoding: $0.json, as: UTF8.self).hasPrefix(#"{"specversion":"1.0""#) })
        #expect(Set(watched.map(\.deviceId)) == Set((0..<6).map { "device-\($0)" }))
    }

    @Test("a batch whose events outgrow the send size is sent while it is applied, every event in order")
    func bigBatchSentInParts() throws {
        let (cluster, producer) = try clusterAndProducer(topics: [topics.positions, topics.events])
        defer { producer.close() }
        // Each first position gives its device a country event of a few hundred bytes: together several
        // times the send size.
        let devices = 3000
        let records = try consumedPositions(cluster, producer: producer, devices: devices)
        let (shards, _) = applyOneBatch(records, producer: producer)
        var sends = 0
        var delivered = 0
        for shard in shards.shards {
            let changes = shard.takeChanges(.all)
            sends += changes.deliveries.count
            let reports = changes.deliveries.flatMap { $0.wait() }
            #expect(reports.allSatisfy { $0.isDelivered })
            delivered += reports.count
            // One producer, one partition: a shard's events keep their order across its sends.
            let offsets = reports.compactMap(\.offset)
            #expect(offsets == offsets.sorted() && Set(offsets).count == offsets.count)
        }
        #expect(delivered == devices)
        #expect(sends > shards.count, "the shards sent each batch at its end only")
    }

    /// Queues `records` on two fresh shards and applies them as one batch; returns the shards and their threads.
    func applyOneBatch(
        _ records: [ConsumerRecord],
        producer: Producer
    ) -> (ShardedDevices, ApplyThreads) {
        var shards = shards()
        let application = ApplyThreads(count: 2)
        enqueue(records, on: &shards)
        _ = application.start(
            &shards,
            polledAt: .now,
            producer: producer,
            feed: EventFeed(metricsFactory: NOOPMetricsHandler.instance)
        )
        application.waitUntilApplied()
        return (shards, application)
    }

    /// Applies six positions and a message that is not JSON as one batch; returns the delivery reports of what
    /// the shards sent.
    func applySixPositionsAndABadMessage(feed: EventFeed) throws -> [DeliveryReport] {
        let (cluster, producer) = try clusterAndProducer(
            topics: [topics.positions, topics.events, topics.deadLetters]
        )
        defer { producer.close() }
        let records = try consumedPositions(cluster, producer: producer, extra: ["not json"])
        var shards = shards()
        let application = ApplyThreads(count: 2)
        enqueue(records, on: &shards)
        _ = application.start(&shards, polledAt: .now, producer: producer, feed: feed)
        application.waitUntilApplied()
        return application.takeChanges(of: shards).flatMap(\.deliveries).flatMap { $0.wait() }
    }
}
