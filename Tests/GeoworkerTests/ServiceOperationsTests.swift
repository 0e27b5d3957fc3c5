import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
import Worker
#endif

/// What an operator sees of a running `geoworker run`: probes, metrics, shutdown, start-up errors.
@Suite("geoworker run: operations", .serialized, .timeLimit(.minutes(10)))
struct ServiceOperationsTests {
    @Test("health, readiness and metrics while it runs; SIGTERM stops it cleanly and nothing is redone")
    func endpointsAndGracefulStop() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 20, positionsPerDevice: 30, topics: bed.topics)
        let invalid = ProducerRecord(topic: bed.topics.positions, key: Array("device-0".utf8), value: Array("{".utf8))
        try await bed.produce(traffic.commands() + traffic.positions() + [invalid])
        let child = try bed.start()
        let port = try await listeningPort(of: child)

        #expect(try await get(port, "health").status == 200)
        try await waitUntil("ready") { try await get(port, "ready").status == 200 }
        try await waitUntil("every position consumed") {
            try await get(port, "metrics").body.contains("geoworker_positions_consumed_total 600\n")
        }
        // Lag and holdings are refreshed at each checkpoint (every 200 ms here): one after the last position shows
        // every partition caught up.
        let caughtUp = (0..<bed.partitions).map { partition in
            #"geoworker_consumer_lag{topic="\#(bed.topics.positions)",partition="\#(partition)"} 0.0"#
        }
        try await waitUntil("a checkpoint published every partition's lag") {
            let lines = Set(try await get(port, "metrics").body.split(separator: "\n").map(String.init))
            return caughtUp.allSatisfy(lines.contains)
        }
        let metrics = try await get(port, "metrics")
        #expect(metrics.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
        let lines = Set(metrics.body.split(separator: "\n").map(String.init))
        for expected in [
            "geoworker_commands_consumed_total 40",
            #"geoworker_events_produced_total{type="geofence.entered"} 40"#,
            #"geoworker_events_produced_total{type="geofence.exited"} 40"#,
            #"geoworker_events_produced_total{type="country.changed"} 40"#,
            #"geoworker_dead_lettered_total{reason="invalid-json"} 1"#,
            "geoworker_stale_positions_total 0",
            "geoworker_duplicate_positions_total 0",
            "geoworker_key_not_device_id_total 0",
            "geoworker_devices 20.0",
            "geoworker_pins 40.0",
        ] {
            #expect(lines.contains(expected), "missing \(expected)")
        }
        #expect(lines.contains { $0.hasPrefix("geoworker_batch_duration_seconds_count ") && !$0.hasSuffix(" 0") })

        let eventsBeforeStop = try await bed.messageCount(bed.topics.events, partitions: bed.partitions)
        // A stop takes the batch in flight and a checkpoint, and ends well before its deadline: one that gave up would
        // exit 2.
        child.send(SIGTERM)
        let ending = await child.waitForExit(timeout: .seconds(60))
        #expect(ending == .exited(0), "\(child.errors.suffix(2000))")
        #expect(child.errors.contains("geoworker stopped"))

        // The next start resumes after everything: it announces nothing again.
        try await bed.runUntilCaughtUp()
        #expect(try await bed.messageCount(bed.topics.events, partitions: bed.partitions) == eventsBeforeStop)
    }

    @Test("the processing counters move between checkpoints, however far apart those are")
    func countersBetweenCheckpoints() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 20, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let child = try bed.start(["--checkpoint-interval-ms", "600000"], omitting: ["--checkpoint-interval-ms"])
        let port = try await listeningPort(of: child)
        try await waitUntil("every position counted, with no checkpoint since the start") {
            try await get(port, "metrics").body.contains("geoworker_positions_consumed_total 600\n")
        }
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0), "\(child.errors.suffix(2000))")
    }

    @Test("a catch-up stopped by Ctrl-C before it caught up exits 3, saying so; one that caught up exits 0")
    func interruptedCatchUp() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        // It cannot catch up while every fetch is refused (NOT_LEADER_OR_FOLLOWER, which librdkafka retries): stopped
        // then, whatever the moment, it has not.
        bed.cluster.refuseNext(100_000, .fetch, with: KafkaError.Code(rawValue: 6))
        let child = try bed.start(["--until-caught-up"])
        try await waitUntil("geoworker runs") { child.errors.contains("geoworker running") || !child.isRunning }
        child.send(SIGINT)
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(3), "\(child.errors.suffix(2000))")
        #expect(child.errors.contains("stopped before catching up"), "\(child.errors.suffix(2000))")
        bed.cluster.stopRefusing(.fetch)
        let finished = try await bed.runUntilCaughtUp()
        #expect(!finished.errors.contains("stopped before catching up"))
    }

    @Test("a missing topic or input topics that are not co-partitioned stop the start with a clear error")
    func topicChecks() async throws {
        let bed = try ServiceTestBed()
        let missing = try bed.start(["--events-topic", "no-such-topic"])
        #expect(await missing.waitForExit(timeout: .seconds(60)) == .exited(1))
        #expect(missing.errors.contains("topic no-such-topic"), "\(missing.errors.suffix(1000))")

        let threePartitions = "commands-3-\(UUID().uuidString.prefix(6))"
        try bed.cluster.createTopic(threePartitions, partitions: 3)
        let skewed = try bed.start(["--commands-topic", threePartitions])
        #expect(await skewed.waitForExit(timeout: .seconds(60)) == .exited(1))
        #expect(skewed.errors.contains("must be co-partitioned"), "\(skewed.errors.suffix(1000))")
    }

    @Test("settings come from GEOWORKER_* variables and a config file; an unusable value names its key")
    func settingsSources() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 3, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let otherEvents = "env-events-\(UUID().uuidString.prefix(6))"
        try bed.cluster.createTopic(otherEvents, partitions: bed.partitions)
        // The config file caps pins at 1, so each device's second `track` is refused (dead-lettered).
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("geoworker-\(UUID()).json")
        try Data(#"{"tracker": {"maxPinsPerDevice": 1}, "topics": {"events": "not-this-one"}}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let child = try bed.start(
            ["--until-caught-up", "--config", file.path],
            omitting: ["--events-topic"],
            environment: ["GEOWORKER_TOPICS_EVENTS": otherEvents]
        )
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(0), "\(child.errors.suffix(2000))")
        let events = try await bed.readAll(otherEvents, partitions: bed.partitions).map(ServiceTestBed.Event.init)
        #expect(!events.isEmpty, "the environment variable beats the config file")
        let refused = try await bed.readAll(bed.topics.deadLetters, partitions: 1)
        #expect(refused.count == 3 && refused.allSatisfy { $0.headers["geoworker-reason"] == "rejected" })

        let badPort = try bed.start(omitting: ["--http-port"], environment: ["GEOWORKER_HTTP_PORT": "eighty"])
        #expect(await badPort.waitForExit(timeout: .seconds(30)) == .exited(1))
        #expect(badPort.errors.contains(#"http.port must be an integer (got "eighty")"#), "\(badPort.errors)")
        let badProperty = try bed.start(["--kafka", "no-equals-sign"])
        #expect(await badProperty.waitForExit(timeout: .seconds(30)) == .exited(1))
        #expect(badProperty.errors.contains("KEY=VALUE"), "\(badProperty.errors)")
        // A prefixed property reaches its client without the prefix (librdkafka names the key it refused).
        let consumerOnly = try bed.start(["--kafka", "consumer.no.such.property=1"])
        #expect(await consumerOnly.waitForExit(timeout: .seconds(30)) == .exited(1))
        #expect(consumerOnly.errors.contains("property 'no.such.property' was refused"), "\(consumerOnly.errors)")
    }

    #if os(Linux)
    @Test("on Linux the service allocates through jemalloc: its log names the allocator and the process maps it")
    func allocatesThroughJemalloc() async throws {
        let bed = try ServiceTestBed()
        let child = try await bed.startRunning()
        #expect(child.errors.contains("allocator=jemalloc 5."), "\(child.errors.prefix(2000))")
        // Read to the end: /proc files report no size, and a read sized by it stops after the first block.
        let mapsFile = try #require(FileHandle(forReadingAtPath: "/proc/\(child.processIdentifier)/maps"))
        let maps = String(decoding: try mapsFile.readToEnd() ?? Data(), as: UTF8.self)
        #expect(maps.contains("/libjemalloc.so"))
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0))
    }
    #endif

    @Test("one instance per state directory: a second run refuses, naming the holder; a SIGKILL frees it")
    func oneInstancePerStateDirectory() async throws {
        let bed = try ServiceTestBed()
        let first = try await bed.startRunning()

        let second = try bed.start()
        #expect(await second.waitForExit(timeout: .seconds(30)) == .exited(1), "\(second.errors.suffix(2000))")
        #expect(
            second.errors.contains(
                "state directory \(bed.stateDir) is in use by process \(first.processIdentifier)"
            )
        )
        #expect(first.isRunning, "the holder is not disturbed")

        // The operating system releases the lock of a killed process: a restart is never blocked.
        first.send(SIGKILL)
        _ = await first.waitForExit(timeout: .seconds(10))
        let restarted = try await bed.startRunning()
        restarted.send(SIGTERM)
        #expect(await restarted.waitForExit(timeout: .seconds(30)) == .exited(0))
    }

    @Test(
        "the group's committed offsets reach the stored ones though the group refused the commits and no input follows"
    )
    func groupOffsetsFollowTheStore() async throws {
        let bed = try ServiceTestBed()
        let child = try bed.start()
        try await waitUntil("partitions are assigned") {
            child.errors.contains("Partitions assigned") || !child.isRunning
        }
        // Every commit of the next few seconds is refused, as a coordinator does while the group rebalances.
        bed.cluster.refuseNext(25, .offsetCommit, with: .rebalanceInProgress)
        let traffic = BorderTraffic(devices: 8, positionsPerDevice: 10, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())

        var inputs: [TopicPartition: Int64] = [:]
        for topic in [bed.topics.positions, bed.topics.commands] {
            for partition in 0..<Int32(bed.partitions) {
                let end = try await bed.messageCount(topic, partition: partition)
                if end > 0 { inputs[TopicPartition(topic, partition)] = end }
            }
        }
        let group = try Consumer(
            configuration: ConsumerConfiguration(bootstrapServers: bed.cluster.bootstrapServers, groupId: bed.group),
            subscription: .partitions([:]),
            logger: ServiceTestBed.logger
        )
        var committed: [TopicPartition: Int64] = [:]
        try await waitUntil("the group holds the end of every input partition", timeout: .seconds(30)) {
            committed = try await group.committedOffsets(for: Array(inputs.keys))
            return committed == inputs || !child.isRunning
        }
        await group.close()
        #expect(committed == inputs, "\(child.errors.suffix(2000))")
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0))
    }

    @Test("a delivery the broker refuses: /health 503 with the reason, rewind, back off, recover; never exits")
    func refusedDeliveries() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        // The next produce requests are refused as for a topic the worker may not write to; nothing but the
        // worker produces now.
        bed.cluster.refuseNext(4, .produce, with: .topicAuthorizationFailed)
        // /health answers 503 only while the worker backs off: 5 s here rather than the default 1 s, which a fresh
        // clone's run once missed whole (a second's stall of the test process under the suite's load).
        let child = try bed.start(environment: ["GEOWORKER_DELIVERY_RETRY_INITIAL_BACKOFF_MS": "5000"])
        let port = try await listeningPort(of: child)

        // /health asked on its own, every 20 ms, not between the event counts, each of which takes a consumer's
        // start-up (over a second under a suite's load).
        let watcher = Task { () -> String? in
            while !Task.isCancelled {
                if let health = try? await get(port, "health"), health.status == 503 { return health.body }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }
        var eventCount: Int64 = 0
        try await waitUntil("refused, then recovered with every event", timeout: .seconds(90)) {
            eventCount = try await bed.messageCount(bed.topics.events, partitions: bed.partitions)
            let recovered = try await get(port, "health").status == 200 && eventCount >= 80
            return (recovered && child.errors.contains("delivery refused")) || !child.isRunning
        }
        watcher.cancel()
        let refusal = await watcher.value
        #expect(child.isRunning, "the worker never exits: \(child.errors.suffix(2000))")
        let reason = try #require(refusal, "/health went 503 while backing off")
        #expect(reason.hasPrefix("backingOff\n") && reason.contains("TOPIC_AUTHORIZATION_FAILED"), "\(reason)")
        #expect(try await get(port, "ready").status == 200)
        let metrics = try await get(port, "metrics").body
        #expect(
            metrics.contains(#"error="TOPIC_AUTHORIZATION_FAILED""#)
                && metrics.contains("geoworker_delivery_failures_total{"),
            "\(metrics)"
        )
        #expect(child.errors.contains("delivery refused; rewinding to the last checkpoint"))
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0))

        // Deduplicated by id, the events are a clean run's, by id and content, and each device's come in order.
        let firstCopies = try await bed.distinctEvents()
        let reference = try await bed.referenceEvents()
        #expect(Set(firstCopies.map(\.json)) == Set(reference.map(\.json)))
        for device in 0..<10 {
            let subject = traffic.deviceId(device)
            #expect(
                firstCopies.filter { $0.subject == subject }.map(\.id)
                    == reference.filter { $0.subject == subject }.map(\.id),
                "the events of \(subject) in order"
            )
        }
    }

    // MARK: Helpers

    /// The port the child's HTTP endpoints listen on (it was started with `--http-port 0`), from its log.
}
