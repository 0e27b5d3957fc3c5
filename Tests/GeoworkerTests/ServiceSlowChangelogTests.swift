import Foundation
import Kafka
import TestSupport
import Testing
import Worker

/// A checkpoint that cannot be written for a while (its changelog's broker gone) must hold up checkpoints, not the
/// events: the loop goes on consuming, and the state catches up when the broker is back.
@Suite("geoworker run: a checkpoint that cannot be written yet", .timeLimit(.minutes(10)))
struct ServiceSlowChangelogTests {
    @Test("the changelog's broker down: events keep coming meanwhile; back up, the checkpoints and a clean stop follow")
    func changelogBrokerDown() async throws {
        let bed = try ServiceTestBed(partitions: 2, brokers: 2)
        let changelog = DeviceChangelog.defaultTopic(groupId: bed.group)
        // Everything on broker 1 but the changelog: taking broker 2 down stops only the checkpoints' records.
        for partition in 0..<Int32(bed.partitions) {
            for topic in [bed.topics.positions, bed.topics.commands, bed.topics.events] {
                try bed.cluster.setLeader(of: topic, partition: partition, to: 1)
            }
            try bed.cluster.setLeader(of: changelog, partition: partition, to: 2)
        }
        try bed.cluster.setLeader(of: bed.topics.deadLetters, partition: 0, to: 1)
        try bed.cluster.setCoordinator(ofGroup: bed.group, to: 1)

        let traffic = BorderTraffic(devices: 12, positionsPerDevice: 10, topics: bed.topics)
        func positions(steps: Range<Int>) -> [ProducerRecord] {
            (0..<traffic.devices).flatMap { device in steps.map { traffic.position(device, step: $0) } }
        }
        func eventCount() async throws -> Int64 {
            try await bed.messageCount(bed.topics.events, partitions: bed.partitions)
        }
        try await bed.produce(traffic.commands())
        try await bed.produce(positions(steps: 0..<3))
        let child = try await bed.startRunning()
        let port = try await listeningPort(of: child)
        try await waitUntilConsumed(port, positions: traffic.devices * 3)

        try bed.cluster.takeBrokerDown(2)
        // A checkpoint with changes to write gets stuck waiting for its changelog records; the loop's next
        // checkpoints fall due meanwhile.
        try await bed.produce(positions(steps: 3..<4))
        try await waitUntilConsumed(port, positions: traffic.devices * 4)
        // Stuck: the store last held everything applied over two checkpoint intervals ago (the gauge and this are the
        // machine's wall clock).
        try await waitUntil("a checkpoint stuck, the next ones due") {
            Date().timeIntervalSince1970 - (try await checkpointUpToDate(port) ?? .infinity) > 2
        }
        let before = try await eventCount()
        try await bed.produce(positions(steps: 4..<traffic.positionsPerDevice))
        try await waitUntilConsumed(port, positions: traffic.devices * traffic.positionsPerDevice)
        try await waitUntil("events for the positions sent while the changelog's broker is down") {
            try await eventCount() > before
        }
        #expect(child.isRunning, "\(child.errors.suffix(2000))")

        try bed.cluster.bringBrokerUp(2)
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(120)) == .exited(0), "\(child.errors.suffix(3000))")
        let events = try await bed.distinctEvents()
        let reference = try await bed.referenceEvents()
        let sameEvents = Set(events.map(\.json)) == Set(reference.map(\.json))
        #expect(sameEvents, "\(events.count) events, \(reference.count) in an uninterrupted run")
    }
}
