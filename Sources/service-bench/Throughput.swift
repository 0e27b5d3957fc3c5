// The throughput part of service-bench: catch-ups of a preload by fresh `geoworker run --until-caught-up`
// processes beside plain librdkafka passes over the same positions.
import BenchSupport
import Foundation
import GeoCore
import Kafka
import TestSupport
import Worker

/// Topics holding a preload, and how many positions it has.
typealias Preload = (topics: WorkerConfiguration.Topics, positions: Int)

/// Preloads 3 pins per device and `options.positions` positions into topics of their own named after `prefix`;
/// returns the topics and the number of positions.
func preloadThroughput(_ prefix: String) -> Preload {
    let topics = makeTopics(prefix)
    let steps = max(1, options.positions / options.devices)
    var preload: [ProducerRecord] = []
    preload.reserveCapacity(options.devices * 3 + options.devices * steps)
    for device in 0..<options.devices {
        for pin in 0..<3 {
            preload.append(trackCommand(topics, device: device, pin: pin, radius: 400, at: start - 1000))
        }
    }
    for step in 0..<steps {
        // About 300 m a step, from 1 km west of home to past the third pin: each device enters and leaves pins.
        for device in 0..<options.devices {
            preload.append(
                position(
                    topics,
                    device: device,
                    longitudeOffset: -0.0135 + 0.004 * Double(step),
                    at: start + Int64(step) * 10_000
                )
            )
        }
    }
    let preloadStart = ContinuousClock.now
    produceAll(preload)
    let positionCount = options.devices * steps
    log(
        String(
            format: "preload: %d commands and %d positions in %.1f s",
            options.devices * 3,
            positionCount,
            (ContinuousClock.now - preloadStart).seconds
        )
    )
    return (topics, positionCount)
}

/// The throughput part (see the top of main.swift): rounds beside plain librdkafka, or the `first`, `compare` runs.
func measureThroughput() {
    let (throughput, positionCount) = preloadThroughput("throughput")

    /// Plain librdkafka's rate over the positions of `preload` (the main preload when nil).
    func rawRate(of preload: Preload? = nil) -> Double {
        let (topics, messages) = preload ?? (throughput, positionCount)
        return rawPass(
            bootstrap: cluster.bootstrapServers,
            topic: topics.positions,
            partitions: Int32(options.partitions),
            messages: messages,
            pattern: .drainReady
        ).rate
    }

    /// The catch-ups' worker CPU time per message (µs), this build's (false) and the baseline's (true).
    var cpuPerMessage: [Bool: [Double]] = [:]
    /// The benchmark process's CPU time per message meanwhile (µs): mostly the in-process mock broker's.
    var brokerCPUPerMessage: [Bool: [Double]] = [:]
    /// Runs `geoworker run --until-caught-up` over the preloaded topics (on `applyThreads`, or the default);
    /// returns its rate from its first message to its last checkpoint, and prints it.
    func catchUp(
        applyThreads: Int?,
        changelog: Bool = true,
        baseline: Bool = false,
        on preload: Preload? = nil
    ) -> Double {
        let (topics, positionCount) = preload ?? (throughput, positionCount)
        let workerStart = ContinuousClock.now
        let cpuBefore = childrenCPUSeconds()
        let faultsBefore = childrenMinorFaults()
        let brokerCPUBefore = ownCPUSeconds()
        let threads = applyThreads.map { ["--apply-threads", "\($0)"] } ?? []
        let worker = startWorker(
            topics,
            partitions: options.partitions,
            state: stateRoot + "/throughput-\(UUID())",
            executable: baseline ? options.baseline! : geoworker,
            ["--until-caught-up"] + threads + (changelog ? [] : ["--no-changelog"])
                + (baseline ? options.baselineArguments : [])
        )
        let ending = worker.waitUntilExit()
        let wall = (ContinuousClock.now - workerStart).seconds
        // The worker is the only child that ends meanwhile: what the children used since is its CPU time.
        let cpu = childrenCPUSeconds() - cpuBefore
        // This process meanwhile is mostly the mock broker (the bench's own threads wait): the other tenant of
        // the two cores.
        let brokerCPU = ownCPUSeconds() - brokerCPUBefore
        let faults = childrenMinorFaults() - faultsBefore
        guard ending == .exited(0) else {
            fail("geoworker run ended \(String(describing: ending)):\n\(worker.errors.suffix(3000))")
        }
        guard let caughtUp = worker.errors.split(separator: "\n").last(where: { $0.contains("caught up") }),
            let positions = caughtUp.firstMatch(of: /positions=(\d+)/).flatMap({ Int($0.1) }),
            let elapsed = caughtUp.firstMatch(of: /elapsed=([0-9.e-]+) seconds/).flatMap({ Double($0.1) })
        else { fail("no catch-up figures in the worker's log:\n\(worker.errors.suffix(2000))") }
        guard positions == positionCount else { fail("the worker applied \(positions) positions of \(positionCount)") }
        let rate = Double(positions) / elapsed
        let threadsUsed =
            applyThreads.map { "\($0) apply thread\($0 == 1 ? "" : "s")" }
            ?? "default apply threads (\(WorkerConfiguration.defaultApplyThreadCount))"
        let inputMessages = Double(positions + options.devices * 3)
        let cpuPerInput = cpu * 1e6 / inputMessages
        log(
            "\(baseline ? "baseline " : "")geoworker run --until-caught-up, \(threadsUsed), changelog \(changelog ? "on" : "off"): "
                + String(
                    format:
                        "%.0f positions/s (%d positions and %d commands in %.2f s from the first message; %.1f s wall with start-up and group join; CPU %.1f s, %.2f us per message; %d page faults; the broker's process %.2f us per message)",
                    rate,
                    positions,
                    options.devices * 3,
                    elapsed,
                    wall,
                    cpu,
                    cpuPerInput,
                    faults,
                    brokerCPU * 1e6 / inputMessages
                )
        )
        cpuPerMessage[baseline, default: []].append(cpuPerInput)
        brokerCPUPerMessage[baseline, default: []].append(brokerCPU * 1e6 / inputMessages)
        return rate
    }

    if options.only == "first" {
        // Fresh preloads, each caught up twice by fresh processes: what the first catch-up of a preload pays
        // for. Every other preload is read by raw librdkafka first, to tell the broker's first fetches apart.
        for round in 0..<4 {
            let fresh = preloadThroughput("first-\(round)")
            if round % 2 == 1 {
                log(String(format: "raw librdkafka first: %.0f positions/s", rawRate(of: fresh)))
            }
            let first = catchUp(applyThreads: nil, on: fresh)
            let second = catchUp(applyThreads: nil, on: fresh)
            log(String(format: "fresh preload %d: first / second catch-up %.2f", round, first / second))
        }
        return
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    if options.only != "compare" {
        // The figure: three rounds on the one preload, each a fresh worker process beside a plain librdkafka
        // pass, with no warm-up: a user's first run is the one they judge. Plain librdkafka reads first in the
        // middle round only, so the worker meets the just-written preload first as well.
        var ratios: [Double] = []
        var rates: [Double] = []
        var rawRates: [Double] = []
        for round in 0..<3 {
            let raw: Double
            let rate: Double
            if round == 1 {
                raw = rawRate()
                rate = catchUp(applyThreads: nil)
            } else {
                rate = catchUp(applyThreads: nil)
                raw = rawRate()
            }
            log(
                String(
                    format: "round %d: raw librdkafka %.0f positions/s; geoworker / raw %.2f",
                    round + 1,
                    raw,
                    rate / raw
                )
            )
            ratios.append(rate / raw)
            rates.append(rate)
            rawRates.append(raw)
        }
        let cpu = cpuPerMessage[false, default: []]
        log(
            String(
                format: "ratio geoworker / raw librdkafka, fresh processes from the first event: %.2f by the median "
                    + "of three rounds (%@) (target 0.45)",
                median(ratios),
                ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ")
            )
        )
        log(
            String(
                format: "first catch-up / the later two: %.2f (%.0f / %.0f positions/s by their median)",
                rates[0] / median(Array(rates.dropFirst())),
                rates[0],
                median(Array(rates.dropFirst()))
            )
        )
        log(
            String(
                format:
                    "worker CPU per input message (positions and commands): %.2f us by the median of three rounds (target 1.5)",
                median(cpu)
            )
        )
        // What the ratio's target leaves the worker on this host: the cores' seconds shared by the messages the
        // worker would take in at 0.45 of raw's rate, less what the broker beside it used per message.
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let messagesPerPosition = Double(positionCount + options.devices * 3) / Double(positionCount)
        let targetMessages = 0.45 * median(rawRates) * messagesPerPosition
        let broker = median(brokerCPUPerMessage[false, default: [0]])
        log(
            String(
                format: "the ratio's CPU budget on this host: %.0f cores / (0.45 x %.0f positions/s x %.2f messages "
                    + "each) = %.2f us per message, %.2f with the broker's %.2f taken off; the worker used %.2f "
                    + "(where it goes and why: docs/performance.md, issue 34)",
                cores,
                median(rawRates),
                messagesPerPosition,
                cores * 1e6 / targetMessages,
                cores * 1e6 / targetMessages - broker,
                broker,
                median(cpu)
            )
        )
    }
    if options.baseline != nil {
        // The first catch-up after the preload ran a quarter slower than the next ones, whichever build ran it
        // (451-525k positions/s where the runs after it gave 613-780k, in four sets of issue 18's seventh
        // session), which biased comparisons against the build that went first. One run of the baseline's
        // first, not counted; then the pairs alternate which build goes first.
        log("warm-up, not counted:")
        _ = catchUp(applyThreads: nil, baseline: true)
        cpuPerMessage = [:]
        var rates: [Double] = []
        var baselineRates: [Double] = []
        for pair in 0..<options.pairs {
            if pair % 2 == 0 {
                rates.append(catchUp(applyThreads: nil))
                baselineRates.append(catchUp(applyThreads: nil, baseline: true))
            } else {
                baselineRates.append(catchUp(applyThreads: nil, baseline: true))
                rates.append(catchUp(applyThreads: nil))
            }
        }
        log(
            String(
                format: "this build / baseline, alternating runs, changelog on: %.2fx by medians (%.0f / %.0f "
                    + "positions/s), %.2fx by bests (%.0f / %.0f)",
                median(rates) / median(baselineRates),
                median(rates),
                median(baselineRates),
                rates.max()! / baselineRates.max()!,
                rates.max()!,
                baselineRates.max()!
            )
        )
        let cpu = median(cpuPerMessage[false, default: []])
        let baselineCPU = median(cpuPerMessage[true, default: []])
        log(
            String(
                format:
                    "worker CPU per message (the whole process, all threads), alternating runs: this build %.2f us, "
                    + "baseline %.2f us by medians (%.2fx less)",
                cpu,
                baselineCPU,
                baselineCPU / cpu
            )
        )
    }
    if options.only != "compare" {
        // For comparison: one apply thread, and the changelog off.
        let oneThread = catchUp(applyThreads: 1)
        let withoutChangelog = catchUp(applyThreads: nil, changelog: false)
        log(
            String(
                format: "one apply thread: %.0f positions/s; changelog off: %.0f positions/s",
                oneThread,
                withoutChangelog
            )
        )
    }
}
