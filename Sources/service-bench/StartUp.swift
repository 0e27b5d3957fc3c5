// The start-up part of service-bench: from process start to the first event, less the group join.
import BenchSupport
import Foundation
import GeoCore
import Kafka
import Synchronization
import TestSupport
import Worker

/// Starts `geoworker run` on `topics` (8 partitions, or the restored store's) where a position that makes an event is
/// waiting, and times the first event's arrival from the process's start, less the group join: the time from the worker
/// saying it is running (its consumer subscribed) to the group's assignment reaching it (the log line of the
/// assignment, less the assignment's own work, which it reports).
///
/// The event is read by a bare consumer, whose own hop (a few ms, see the latency floor) is included.
func timeStartUp(
    _ label: String,
    topics: WorkerConfiguration.Topics,
    partitions: Int,
    group: String,
    changelogExists: Bool,
    state: String,
    trigger: ProducerRecord
) {
    let probe = startProbe(topic: topics.events, readsEvents: true, partitions: partitions)
    produceAll([trigger])
    let clock = ContinuousClock()
    let spawned = clock.now
    let worker = startWorker(
        topics,
        partitions: partitions,
        state: state,
        group: group,
        changelogExists: changelogExists,
        ["--kafka", "consumer.fetch.wait.max.ms=5"]
    )
    var running: ContinuousClock.Instant?
    var assigned: (at: ContinuousClock.Instant, work: Double)?
    var firstEvent: ContinuousClock.Instant?
    let deadline = clock.now + .seconds(120)
    while firstEvent == nil {
        guard clock.now < deadline, worker.isRunning else {
            fail("no event from the worker:\n\(worker.errors.suffix(2000))")
        }
        if running == nil || assigned == nil {
            let log = worker.errors
            if running == nil && log.contains("geoworker running") { running = clock.now }
            if assigned == nil,
                let line = log.split(separator: "\n").first(where: { $0.contains("[Worker] assigned ") }),
                let work = line.firstMatch(of: /elapsed=([0-9.e-]+) seconds/).flatMap({ Double($0.1) })
            {
                assigned = (clock.now, work)
            }
        }
        if probe.sampled.load(ordering: .relaxed) > 0 { firstEvent = clock.now }
        Thread.sleep(forTimeInterval: 0.001)
    }
    _ = probe.stop()
    worker.send(SIGTERM)
    _ = worker.waitUntilExit()
    guard let running, let assigned, let firstEvent else { fail("the worker's log lacks its start-up lines") }
    let join = (assigned.at - running).seconds - assigned.work
    let total = (firstEvent - spawned).seconds
    log(
        String(
            format: "start-up, %@: first event %.0f ms after the process started, %.0f ms of it the group join: "
                + "%.0f ms without the join (target < 200 with an empty store): running after %.0f ms, the "
                + "assignment's own work %.0f ms, from there to the event %.0f ms",
            label,
            total * 1000,
            join * 1000,
            (total - join) * 1000,
            (running - spawned).seconds * 1000,
            assigned.work * 1000,
            (firstEvent - assigned.at).seconds * 1000
        )
    )
}
