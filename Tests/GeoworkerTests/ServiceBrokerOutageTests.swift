import Foundation
import Kafka
import PartitionOffsets
import TestSupport
import Testing
import Worker

/// What a run does when its broker is missing or goes down: a service started before its broker waits for it, not
/// ready; a catch-up run gives up with exit status 75 once its retry budget is spent; an outage under a running
/// instance loses and repeats nothing; a stop is honoured meanwhile.
///
/// A suite of its own beside ``ServiceRetryTests`` so that the two run side by side (each suite's tests one after
/// another: each starts workers of its own).
@Suite("geoworker run: a broker missing or down", .serialized, .timeLimit(.minutes(10)))
struct ServiceBrokerOutageTests {
    @Test(
        "a service started while its broker is down waits for it, not ready, then runs; SIGTERM stops it",
        arguments: [false, true]
    )
    func serviceWaitsForTheBroker(inGroupDirectory: Bool) async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        // With an advertised address, the services beside the worker (the group's directory, its event stream) wait
        // for Kafka as the worker does.
        if inGroupDirectory { try bed.broker.createTopic("\(bed.group)-instances", partitions: 1) }
        let directory = inGroupDirectory ? ["--http-devices", "--http-advertised-address", "http://127.0.0.1"] : []
        try bed.cluster.takeBrokerDown(1)
        let child = try bed.start(directory, environment: ServiceRetryTests.quickRetries)
        let port = try await listeningPort(of: child)
        try await waitUntil("two attempts logged", timeout: .seconds(60)) {
            child.errors.components(separatedBy: "cannot reach Kafka; trying again").count > 2 || !child.isRunning
        }
        #expect(child.isRunning, "waiting, not exiting: \(child.errors.suffix(2000))")
        #expect(try await get(port, "health").status == 200, "alive: a liveness probe must not restart it")
        let ready = try await get(port, "ready")
        #expect(ready.status == 503 && ready.body.contains("waiting for Kafka"), "\(ready.body)")

        try bed.cluster.bringBrokerUp(1)
        try await waitUntil("every position consumed", timeout: .seconds(90)) {
            try await get(port, "metrics").body.contains("geoworker_positions_consumed_total 300\n") || !child.isRunning
        }
        #expect(try await get(port, "ready").status == 200)
        if inGroupDirectory {
            try await ServiceGroupAnswersTests.waitForDirectory(
                port,
                instances: 1,
                partitions: bed.partitions,
                log: child
            )
        }
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0), "\(child.errors.suffix(2000))")
        let events = try await bed.distinctEvents()
        #expect(Set(events.map(\.json)) == Set(try await bed.referenceEvents().map(\.json)))
    }

    @Test("SIGTERM while waiting for a missing broker stops it within seconds, exit 0")
    func stopWhileWaitingForTheBroker() async throws {
        let bed = try ServiceTestBed()
        try bed.cluster.takeBrokerDown(1)
        let child = try bed.start(environment: ServiceRetryTests.quickRetries)
        try await waitUntil("an attempt logged", timeout: .seconds(60)) {
            child.errors.contains("cannot reach Kafka; trying again") || !child.isRunning
        }
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(8)) == .exited(0), "\(child.errors.suffix(2000))")
    }

    @Test("a catch-up run with its broker missing gives up after its budget: exit 75")
    func catchUpWithoutBroker() async throws {
        let bed = try ServiceTestBed()
        try bed.cluster.takeBrokerDown(1)
        var environment = ServiceRetryTests.quickRetries
        environment["GEOWORKER_DELIVERY_RETRY_MAX_ATTEMPTS"] = "2"
        let child = try bed.start(["--until-caught-up"], environment: environment)
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(75), "\(child.errors.suffix(3000))")
        #expect(child.errors.contains("giving up after 2 attempts in a row (Kafka unreachable)"))
    }

    @Test(
        "a catch-up run under a broker outage longer than its budget exits 75; run again later, it delivers everything"
    )
    func catchUpOutageLongerThanBudget() async throws {
        let bed = try ServiceTestBed(brokers: 2)
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        // Everything on broker 1 but positions partition 3, led by broker 2, which is down until the outage begins:
        // however fast the run reads the rest and however late this test looks, it cannot finish before the outage,
        // and once broker 1 is down it has partition 3's positions to apply and their events to deliver.
        for partition in 0..<Int32(bed.partitions) {
            for topic in [bed.topics.positions, bed.topics.commands, bed.topics.events, changelog] {
                try bed.cluster.setLeader(of: topic, partition: partition, to: 1)
            }
        }
        try bed.cluster.setLeader(of: bed.topics.deadLetters, partition: 0, to: 1)
        try bed.cluster.setCoordinator(ofGroup: bed.group, to: 1)
        let traffic = BorderTraffic(devices: 100, positionsPerDevice: 60, topics: bed.topics)
        try await bed.produce(traffic.commands())
        try await bed.produce(traffic.positions())
        let gated = TopicPartition(bed.topics.positions, 3)
        try bed.cluster.setLeader(of: gated.topic, partition: gated.partition, to: 2)
        try bed.cluster.takeBrokerDown(2)
        var environment = ServiceRetryTests.quickRetries
        environment["GEOWORKER_DELIVERY_RETRY_MAX_ATTEMPTS"] = "2"
        environment["GEOWORKER_DELIVERY_RETRY_TIMEOUT_MS"] = "3000"
        let child = try bed.start(["--until-caught-up"], environment: environment)
        let port = try await listeningPort(of: child)
        try await waitUntil("a tenth of the positions consumed") {
            counter("geoworker_positions_consumed_total", in: try await get(port, "metrics").body) >= 600
                || !child.isRunning
        }
        #expect(child.isRunning, "the run ended before the outage: \(child.errors.suffix(3000))")
        try bed.cluster.takeBrokerDown(1)
        try bed.cluster.bringBrokerUp(2)
        let ending = await child.waitForExit(timeout: .seconds(90))
        try bed.cluster.bringBrokerUp(1)
        #expect(ending == .exited(75), "\(child.errors.suffix(3000))")
        #expect(child.errors.contains("giving up after 2 attempts in a row"), "\(child.errors.suffix(3000))")

        try await bed.runUntilCaughtUp()
        let reference = try await bed.referenceEvents()
        #expect(Set(try await bed.distinctEvents().map(\.json)) == Set(reference.map(\.json)))
    }

    @Test("SIGTERM with the broker down mid-stream: the stop gives up at its deadline, exits 2; nothing is lost")
    func stopPastItsDeadline() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 300, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands())
        // A deadline far shorter than the group's answer limit (the session timeout): the stop's last commit and its
        // leave wait for a coordinator that is gone. Checkpoints a minute apart, so that the stop has one to finish
        // whatever the machine's pace: with the default second, a loaded run had checkpointed the whole input before
        // the broker went down, and its stop, with nothing left to commit, ended cleanly.
        let child = try bed.start(
            ["--shutdown-timeout-ms", "500", "--checkpoint-interval-ms", "60000"],
            environment: ServiceRetryTests.quickRetries
        )
        let port = try await listeningPort(of: child)
        try await waitUntil("ready") { try await get(port, "ready").status == 200 || !child.isRunning }
        try await bed.produce(traffic.positions())
        try await waitUntil("consuming") {
            counter("geoworker_positions_consumed_total", in: try await get(port, "metrics").body) > 0
                || !child.isRunning
        }
        try bed.cluster.takeBrokerDown(1)
        child.send(SIGTERM)
        let ending = await child.waitForExit(timeout: .seconds(30))
        try bed.cluster.bringBrokerUp(1)
        #expect(ending == .exited(2), "a stop that gave up, not a crash nor a clean stop: \(child.errors.suffix(3000))")
        #expect(child.errors.contains("the stop gave up at its deadline"), "\(child.errors.suffix(2000))")

        try await bed.runUntilCaughtUp()
        #expect(Set(try await bed.distinctEvents().map(\.json)) == Set(try await bed.referenceEvents().map(\.json)))
    }

    @Test("the broker down for 90 s under a running instance: the same events as a clean run, then a clean stop")
    func longOutage() async throws {
        let bed = try ServiceTestBed()
        try await Self.expectOutageWaitedOut(bed, lasting: .seconds(90)) {
            try bed.cluster.takeBrokerDown(1)
        } bringUp: {
            try bed.cluster.bringBrokerUp(1)
        }
    }

    /// Runs an instance through half a stream, takes the broker down for `duration`, brings it up with the rest of
    /// the stream, and expects the events of a clean run and a clean stop.
    static func expectOutageWaitedOut(
        _ bed: ServiceTestBed,
        lasting duration: Duration,
        takeDown: () async throws -> Void,
        bringUp: () async throws -> Void
    ) async throws {
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        let positions = traffic.positions()
        try await bed.produce(traffic.commands() + positions.prefix(positions.count / 2))
        let child = try bed.start()
        let port = try await listeningPort(of: child)
        try await waitUntilConsumed(port, positions: positions.count / 2)
        try await takeDown()
        try await Task.sleep(for: duration)
        #expect(child.isRunning, "an outage is waited out: \(child.errors.suffix(2000))")
        try await bringUp()
        try await bed.produce(Array(positions.suffix(positions.count - positions.count / 2)))
        let reference = try await bed.referenceEvents()
        try await waitUntil("every event delivered", timeout: .seconds(120)) {
            try await bed.distinctEvents().count >= reference.count || !child.isRunning
        }
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0), "\(child.errors.suffix(2000))")
        #expect(Set(try await bed.distinctEvents().map(\.json)) == Set(reference.map(\.json)))
    }
}
