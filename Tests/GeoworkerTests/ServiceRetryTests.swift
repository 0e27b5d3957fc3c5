import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// What a run does when Kafka refuses its deliveries: a catch-up run retries them and ends well only with every event
/// delivered, or gives up with exit status 75 once its retry budget is spent. (A broker missing or down:
/// ``ServiceBrokerOutageTests``.)
@Suite("geoworker run: retries and the retry budget", .serialized, .timeLimit(.minutes(10)))
struct ServiceRetryTests {
    /// Short back-offs, so that the tests wait seconds rather than minutes.
    static let quickRetries = ["GEOWORKER_DELIVERY_RETRY_INITIAL_BACKOFF_MS": "100"]

    @Test("a catch-up run whose deliveries are refused three times retries, then exits 0 with every event")
    func catchUpRetriesRefusals() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        bed.cluster.refuseNext(3, .produce, with: .topicAuthorizationFailed)
        // One checkpoint only, the last: the refusal is met as the run ends, where it used to end the run.
        let child = try bed.start(
            ["--until-caught-up", "--checkpoint-interval-ms", "600000"],
            omitting: ["--checkpoint-interval-ms"],
            environment: Self.quickRetries
        )
        #expect(await child.waitForExit(timeout: .seconds(120)) == .exited(0), "\(child.errors.suffix(3000))")
        #expect(child.errors.contains("delivery refused; rewinding to the last checkpoint"))

        let events = try await bed.distinctEvents()
        let reference = try await bed.referenceEvents()
        #expect(!reference.isEmpty)
        #expect(Set(events.map(\.json)) == Set(reference.map(\.json)), "every event of a clean run, by id and content")
    }

    @Test("a catch-up run whose deliveries are refused for good gives up after its budget: exit 75, saying why")
    func catchUpGivesUp() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        bed.cluster.refuseNext(1_000_000, .produce, with: .topicAuthorizationFailed)
        defer { bed.cluster.stopRefusing(.produce) }
        var environment = Self.quickRetries
        environment["GEOWORKER_DELIVERY_RETRY_MAX_ATTEMPTS"] = "3"
        let child = try bed.start(["--until-caught-up"], environment: environment)
        #expect(await child.waitForExit(timeout: .seconds(120)) == .exited(75), "\(child.errors.suffix(3000))")
        #expect(child.errors.contains("giving up after 3 attempts in a row (deliveries refused)"))
        #expect(child.errors.contains("TOPIC_AUTHORIZATION_FAILED"), "the broker's error")
        // The events' or the changelog's records, whichever the broker refused last.
        #expect(child.errors.contains(#/could not deliver \d+ records to geoworker-test-/#), "how many, to which topic")
        #expect(child.errors.contains("code=unavailable"))
    }

    @Test(
        "the same input gives the same events when the commands' fetches come late: their partition is waited for",
        arguments: [1, 2]
    )
    func deterministicMerge(run: Int) async throws {
        // The commands partitions on a broker that answers 0.6 s late, the positions on one that answers at
        // once, and small fetches: each commands partition comes in many fetches, each later than the default
        // merge wait of 0.2 s. A pair whose commands side runs dry while its partition holds more must wait for
        // it; going on after the merge wait would apply positions before the `track` commands that precede them.
        let bed = try ServiceTestBed(brokers: 2)
        for partition in 0..<Int32(bed.partitions) {
            try bed.cluster.setLeader(of: bed.topics.commands, partition: partition, to: 2)
        }
        let traffic = BorderTraffic(devices: 40, positionsPerDevice: 20, topics: bed.topics)
        // One command per produce request: a record batch each, so that a fetch can return a few of them (the
        // mock broker returns whole batches).
        for command in traffic.commands() { try await bed.produce([command]) }
        try await bed.produce(traffic.positions())
        let reference = try await bed.referenceEvents()
        try bed.cluster.setRoundTripDelay(of: 2, to: .milliseconds(600))
        let child = try bed.start(
            ["--until-caught-up", "--kafka", "consumer.max.partition.fetch.bytes=600"],
            environment: Self.quickRetries
        )
        #expect(await child.waitForExit(timeout: .seconds(180)) == .exited(0), "\(child.errors.suffix(2000))")
        let events = try await bed.distinctEvents()
        #expect(
            Set(events.map(\.json)) == Set(reference.map(\.json)),
            "run \(run): \(events.count) / \(reference.count)"
        )
    }
}
