// The steady part of service-bench: a fleet in its everyday state. --steady-devices devices (20,000) each report once a
// second, a few metres from the last fix, inside the pin each tracks at home: after the first round, a position changes
// its device's state (its last fix) and gives no event. What it measures is the worker's CPU per position over
// --steady-seconds (30) after a 15 s warm-up, read from /proc while it runs: the cost of keeping up, the checkpoints'
// included, which a catch-up hides (a device changes many times between checkpoints there, once here).
//
// Measured twice, because the mock broker answers fetches unlike a real one: a real broker answers a fetch as soon as
// data arrives (fetch.min.bytes 1), the mock only at once or after fetch.wait.max.ms. First with the worker as a user
// runs it (librdkafka's default wait, 500 ms: a fetch that found nothing waits, so the next brings more), then with
// the 5 ms wait the latency part uses, which fetches at least as often as a real broker under this stream would.
import BenchSupport
import Foundation
import Kafka
import TestSupport
import Worker

/// The user and system CPU time a running process has used, in seconds (`/proc/<pid>/stat`); 0 where there is none.
func liveCPUSeconds(of pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let afterName = text.lastIndex(of: ")")
    else { return 0 }
    // After "pid (name)": state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: afterName)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Produces one position per device per second, spread evenly over each second in 10 ms ticks, for `seconds`.
///
/// `onSecond` is called as each second begins, with the seconds elapsed. Returns the positions sent.
func produceFleet(
    _ topics: WorkerConfiguration.Topics,
    devices: Int,
    seconds: Int,
    onSecond: (Int) -> Void
) -> Int {
    let producer = makeProducer(linger: .milliseconds(5))
    defer { producer.close() }
    let perTick = max(1, devices / 100)
    let clock = ContinuousClock()
    let start = clock.now
    var sent = 0
    var deliveries: [DeliveryBatch] = []
    for tick in 0..<seconds * 100 {
        if tick % 100 == 0 { onSecond(tick / 100) }
        let due = start + .milliseconds(10 * tick)
        if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now).seconds) }
        let time = nowMilliseconds()
        let round = tick / 100
        let records = (0..<perTick).map { index in
            // A few metres east each second and back every 20: always inside the 200 m pin.
            position(
                topics,
                device: (tick % 100) * perTick + index,
                longitudeOffset: Double(round % 20) * 0.00005,
                at: time
            )
        }
        sent += records.count
        deliveries.append(producer.send(records))
    }
    let undelivered = deliveries.flatMap { $0.wait() }.filter { !$0.isDelivered }.count
    if undelivered > 0 { fail("\(undelivered) positions undelivered") }
    return sent
}

func measureSteadyStream() {
    measureSteadyStream(fetchWait: nil)
    measureSteadyStream(fetchWait: 5)
}

/// One steady run; `fetchWait` (milliseconds) overrides the worker's `consumer.fetch.wait.max.ms`, nil keeps its
/// default.
private func measureSteadyStream(fetchWait: Int?) {
    let partitions = 8
    let devices = options.steadyDevices
    let name = fetchWait.map { "steady-wait-\($0)" } ?? "steady"
    let topics = makeTopics(name, partitions: partitions)
    let pinTime = nowMilliseconds() - 60_000
    produceAll((0..<devices).map { trackCommand(topics, device: $0, pin: 0, radius: 200, at: pinTime) })
    let worker = startLiveWorker(topics, partitions: partitions, state: stateRoot + "/" + name, fetchWait: fetchWait)
    let warmUp = 15
    var cpuAtStart = 0.0
    var idleAtStart = 0.0
    var benchAtStart = 0.0
    let sent = produceFleet(topics, devices: devices, seconds: warmUp + options.steadySeconds) { second in
        guard second == warmUp else { return }
        cpuAtStart = liveCPUSeconds(of: worker.processIdentifier)
        idleAtStart = machineIdleSeconds()
        benchAtStart = ownCPUSeconds()
    }
    let workerCPU = liveCPUSeconds(of: worker.processIdentifier) - cpuAtStart
    let idle = machineIdleSeconds() - idleAtStart
    let bench = ownCPUSeconds() - benchAtStart
    worker.send(SIGTERM)
    _ = worker.waitUntilExit()
    guard worker.errors.contains("geoworker stopped") else {
        fail("the worker did not stop:\n\(worker.errors.suffix(2000))")
    }
    let measured = devices * options.steadySeconds
    let setting = fetchWait.map { "fetch wait \($0) ms" } ?? "the worker's defaults"
    log(
        "steady stream, \(setting): "
            + String(
                format: "%d devices, one position a second each (%d sent, %d measured over %d s "
                    + "after a %d s warm-up), 8 partitions: the worker's CPU %.1f s, %.2f us per position; the cores idle "
                    + "%.1f CPU-seconds, this process (mock broker, producer) %.1f",
                devices,
                sent,
                measured,
                options.steadySeconds,
                warmUp,
                workerCPU,
                workerCPU * 1e6 / Double(max(1, measured)),
                idle,
                bench
            )
    )
}
