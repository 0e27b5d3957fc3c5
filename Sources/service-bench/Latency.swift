// The latency part of service-bench: positions produced at a steady rate, each event timed from its position's
// produce to its arrival at a consumer, beside the floor of a bare consumer reading the same kind of stream.
import BenchSupport
import Foundation
import GeoCore
import Kafka
import PartitionOffsets
import Synchronization
import TestSupport
import Worker

// MARK: Latency

func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

/// Reads one topic from its end on a thread of its own and times each message it receives from its position's produce.
///
/// On the events topic: geofence events, from the position's time (the event's `time`) to now and to the worker's send
/// of the event (the record's create time, which librdkafka stamps when the worker produces it). On a positions topic:
/// from the record's create time to now, the bare hop.
final class LatencyProbe: @unchecked Sendable {
    // @unchecked: `samples` is written by the probe's thread only until `stop()` returns.
    private let consumer: Consumer
    private let readsEvents: Bool
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    struct Sample {
        /// Position produced -> received by the probe.
        var total: Int64
        /// Position produced -> event produced by the worker: the inbound hop and the worker's own time.
        var toWorkerSend: Int64?
        /// When the position was produced (milliseconds since the epoch).
        var produced: Int64
    }
    private(set) var samples: [Sample] = []
    /// How many samples were taken: what ``waitFor(_:)`` counts (other events, such as country changes, are
    /// not samples and must not end the wait early).
    let sampled = Atomic<Int>(0)

    init(topic: String, readsEvents: Bool, partitions: Int) throws {
        self.readsEvents = readsEvents
        var starts: [TopicPartition: StartOffset] = [:]
        for partition in 0..<Int32(partitions) { starts[TopicPartition(topic, partition)] = .end }
        consumer = try Consumer(
            configuration: ConsumerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                groupId: "latency-probe",
                properties: ["fetch.wait.max.ms": "5"]
            ),
            subscription: .partitions(starts),
            logger: logger
        )
        let thread = Thread { [self] in
            read()
            finished.signal()
        }
        thread.start()
    }

    private func read() {
        let geofence: StaticString = #""type":"geofence."#
        let time: StaticString = #""time":""#
        while !stopped.load(ordering: .acquiring) {
            guard let batch = try? consumer.poll(maxMessages: 10_000, timeout: .milliseconds(50)) else { continue }
            let now = nowMilliseconds()
            let samplesBefore = samples.count
            for record in batch {
                guard readsEvents else {
                    if let produced = record.timestampMilliseconds {
                        samples.append(Sample(total: now - produced, produced: produced))
                    }
                    continue
                }
                record.withValue { value in
                    guard let value, find(geofence, in: value) != nil, let end = find(time, in: value) else { return }
                    let text = UnsafeRawBufferPointer(rebasing: value[end..<min(value.count, end + 24)])
                    guard let produced = Timestamp.parseRFC3339(text) else { return }
                    let sent = record.timestampMilliseconds ?? now
                    samples.append(Sample(total: now - produced, toWorkerSend: sent - produced, produced: produced))
                }
            }
            sampled.add(samples.count - samplesBefore, ordering: .relaxed)
        }
        consumer.close()
    }

    /// The offset just past the first occurrence of `needle` in `haystack`. (A plain byte search: the probe
    /// reads every event on a core it shares with the worker and the broker, so it must not be the slow part;
    /// Foundation's generic `firstRange(of:)` took half a core.)
    private func find(_ needle: StaticString, in haystack: UnsafeRawBufferPointer) -> Int? {
        let pattern = UnsafeRawBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)
        guard haystack.count >= pattern.count, let base = haystack.baseAddress else { return nil }
        var start = 0
        while start <= haystack.count - pattern.count {
            guard let hit = memchr(base + start, Int32(pattern[0]), haystack.count - pattern.count - start + 1) else {
                return nil
            }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + offset, pattern.baseAddress!, pattern.count) == 0 { return offset + pattern.count }
            start = offset + 1
        }
        return nil
    }

    func stop() -> [Sample] {
        stopped.store(true, ordering: .releasing)
        finished.wait()
        return samples
    }

    /// Waits until `count` samples were taken, or 10 s.
    func waitFor(_ count: Int) {
        let deadline = ContinuousClock.now + .seconds(10)
        while sampled.load(ordering: .relaxed) < count && ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
    }
}

func startProbe(topic: String, readsEvents: Bool, partitions: Int) -> LatencyProbe {
    do {
        let probe = try LatencyProbe(topic: topic, readsEvents: readsEvents, partitions: partitions)
        Thread.sleep(forTimeInterval: 2)  // its partitions' ends are looked up before anything is produced
        return probe
    } catch {
        fail("probe: \(error)")
    }
}

/// Produces positions at `options.rate` for `options.seconds`, in 10 ms ticks each stamped with its time: round 0 far
/// from home (3.7 km east), then home, far, home...: each position after the first crosses its device's pin.
///
/// Returns what was sent, how long it took and how many were not delivered.
func produceSteadily(_ topics: WorkerConfiguration.Topics) -> (sent: Int, seconds: Double, undelivered: Int) {
    let producer = makeProducer(linger: .milliseconds(1))
    let perTick = max(1, options.rate / 100)
    let clock = ContinuousClock()
    let start = clock.now
    var sent = 0
    var deliveries: [DeliveryBatch] = []
    for tick in 0..<options.seconds * 100 {
        let due = start + .milliseconds(10 * tick)
        if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now).seconds) }
        let time = nowMilliseconds()
        var records: [ProducerRecord] = []
        records.reserveCapacity(perTick)
        for _ in 0..<perTick {
            let round = sent / options.devices
            let device = sent % options.devices
            records.append(position(topics, device: device, longitudeOffset: round % 2 == 0 ? 0.05 : 0, at: time))
            sent += 1
        }
        deliveries.append(producer.send(records))
    }
    let seconds = (clock.now - start).seconds
    let undelivered = deliveries.flatMap { $0.wait() }.filter { !$0.isDelivered }.count
    producer.close()
    return (sent, seconds, undelivered)
}

/// Where the tail comes from: the slowest 100 ms windows by produce time ("+2.3 s: 310 ms"), slowest first, and how
/// many windows had a sample over 50 ms, so that a tail from a few stalls is told from one spread over the run.
func slowWindows(_ samples: [LatencyProbe.Sample]) -> String {
    guard let first = samples.map(\.produced).min() else { return "none" }
    var worst: [Int64: Int64] = [:]
    for sample in samples {
        let window = (sample.produced - first) / 100
        worst[window] = max(worst[window] ?? 0, sample.total)
    }
    let slowest = worst.sorted { $0.value > $1.value }.prefix(6)
    let over = worst.values.filter { $0 > 50 }.count
    return slowest.map { String(format: "+%.1f s: %d ms", Double($0.key) / 10, $0.value) }.joined(separator: ", ")
        + "; \(over) of \(worst.count) windows over 50 ms"
}

/// "p50 a, p90 b, p99 c, max d" of `values`.
func percentiles(_ values: [Int64]) -> String {
    let sorted = values.sorted()
    func at(_ p: Double) -> Int64 { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    return "p50 \(at(0.5)), p90 \(at(0.9)), p99 \(at(0.99)), max \(sorted.last!)"
}

/// A worker that keeps running on `topics`, once it has joined and been assigned every partition.
///
/// librdkafka's mock broker answers a fetch that found nothing only after fetch.wait.max.ms (500 ms by default), even
/// when data arrives meanwhile (a real broker answers as soon as data is there): a short wait keeps the mock from
/// adding up to half a second to every hop. `fetchWait` nil runs the worker with librdkafka's default.
func startLiveWorker(
    _ topics: WorkerConfiguration.Topics,
    partitions: Int,
    state: String,
    fetchWait: Int? = 5
) -> BackgroundProcess {
    let wait = fetchWait.map { ["--kafka", "consumer.fetch.wait.max.ms=\($0)"] } ?? []
    let worker = startWorker(topics, partitions: partitions, state: state, wait)
    let joinDeadline = ContinuousClock.now + .seconds(60)
    while !worker.errors.contains("assigned \(2 * partitions) partitions") {
        guard ContinuousClock.now < joinDeadline, worker.isRunning else {
            fail("the worker did not start:\n\(worker.errors.suffix(2000))")
        }
        Thread.sleep(forTimeInterval: 0.05)
    }
    return worker
}

/// Produce-to-event latency with `partitions` partitions per topic: the floor first, then the worker.
func measureLatency(partitions: Int) {
    // The floor: the same stream read by a bare consumer, no worker. The worker's path is two such hops (positions
    // in, events out) plus its own time.
    let floorTopics = makeTopics("floor-\(partitions)", partitions: partitions)
    let floorProbe = startProbe(topic: floorTopics.positions, readsEvents: false, partitions: partitions)
    let floorRun = produceSteadily(floorTopics)
    floorProbe.waitFor(floorRun.sent)
    let floor = floorProbe.stop()
    guard !floor.isEmpty else { fail("the bare consumer received nothing") }
    log(
        String(
            format: "latency floor (%d partitions): %d positions produced in %.1f s (%.0f/s); ",
            partitions,
            floorRun.sent,
            floorRun.seconds,
            Double(floorRun.sent) / floorRun.seconds
        )
            + "produce -> a bare consumer's poll (ms): \(percentiles(floor.map(\.total)))"
    )

    let latencyTopics = makeTopics("latency-\(partitions)", partitions: partitions)
    let pinTime = nowMilliseconds() - 60_000
    produceAll((0..<options.devices).map { trackCommand(latencyTopics, device: $0, pin: 0, radius: 200, at: pinTime) })
    let live = startLiveWorker(latencyTopics, partitions: partitions, state: stateRoot + "/latency-\(partitions)")
    let probe = startProbe(topic: latencyTopics.events, readsEvents: true, partitions: partitions)
    let cpuBefore = childrenCPUSeconds()
    let idleBefore = machineIdleSeconds()
    let benchBefore = ownCPUSeconds()
    let run = produceSteadily(latencyTopics)
    // Over the stream: how much of the cores was left idle, and what this process (the mock broker, the producer,
    // the probe) took of them: the worker's share is what is left.
    let streamIdle = machineIdleSeconds() - idleBefore
    let streamBench = ownCPUSeconds() - benchBefore
    let expected = max(0, run.sent - options.devices)
    probe.waitFor(expected)
    let samples = probe.stop()
    live.send(SIGTERM)
    _ = live.waitUntilExit()
    // The whole process once it has exited (start-up and the stop's checkpoint included): what the worker's own
    // CPU per position is at this rate, where polls and rounds are small.
    let workerCPU = childrenCPUSeconds() - cpuBefore
    guard !samples.isEmpty else { fail("no geofence events arrived:\n\(live.errors.suffix(2000))") }
    log(
        String(
            format:
                "latency: %d positions produced in %.1f s (%.0f/s, %d undelivered); %d geofence events of %d expected",
            run.sent,
            run.seconds,
            Double(run.sent) / run.seconds,
            run.undelivered,
            samples.count,
            expected
        )
    )
    log(
        "latency produce -> event delivered, \(partitions) partitions (ms, millisecond clock): \(percentiles(samples.map(\.total))) (target p99 < 50)"
    )
    log("  of which produce -> the worker's send of the event: \(percentiles(samples.compactMap(\.toWorkerSend)))")
    log("  and the worker's send -> event delivered: \(percentiles(samples.map { $0.total - ($0.toWorkerSend ?? 0) }))")
    log(
        String(
            format: "  the worker's CPU (the whole process): %.1f s, %.2f us per position",
            workerCPU,
            workerCPU * 1e6 / Double(max(1, run.sent))
        )
    )
    log(
        String(
            format: "  during the stream's %.1f s: the %d cores idle %.1f CPU-seconds; this process (mock broker, "
                + "producer, probe) %.1f (with no core idle the p99 is the queue's; the worker's CPU by stage and "
                + "why: docs/performance.md, issue 34)",
            run.seconds,
            ProcessInfo.processInfo.activeProcessorCount,
            streamIdle,
            streamBench
        )
    )
    log("  slowest 100 ms windows by produce time: \(slowWindows(samples))")
    // The stream's first round is every device's first fix (lookups, initial events), at full rate: the backlog it
    // leaves is the start's, not the steady state's. The first round gives no geofence event, so the first sample is
    // the second round's, 1 s into the stream.
    let secondRound = samples.map(\.produced).min() ?? 0
    let steady = samples.filter { $0.produced >= secondRound + 2_000 }
    if !steady.isEmpty {
        log("  steady state (positions produced from 3 s into the stream on): \(percentiles(steady.map(\.total)))")
    }
}
