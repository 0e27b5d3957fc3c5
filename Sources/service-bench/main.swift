// End-to-end benchmark of the service, against librdkafka's mock cluster in this process.
//
//   swift run -c release service-bench [--devices N] [--positions N] [--rate N] [--seconds S]
//                                      [--latency-partitions N] [--restore-devices N]
//                                      [--only throughput|compare|restore|startup|latency|geocode]
//                                      [--baseline PATH [--pairs N]] [--worker PATH] [--worker-arg ARG]...
//
// Throughput: preloads 3 pins per device and the positions (64 partitions: the mock keeps only about 5 MB
// per partition), then times raw librdkafka reading the positions topic and the release `geoworker run
// --until-caught-up` processing positions and commands, in the same run. Rates count from the first message
// to the last (the worker reports its own, after its final checkpoint); the worker's start-up and group join
// are printed apart. The catch-up runs alternate with the changelog on (the default) and off. With
// --baseline (another build's geoworker, such as the commit a performance change starts from), the catch-ups
// alternate between this build's worker and that one on the same preload, three of each (--pairs), each
// build going first in every other pair, after a warm-up run that is not counted, changelog on; `--only compare` runs those alternating catch-ups and nothing else (for profiling a pair of
// builds, or a quick comparison).
// --worker-arg passes an argument to every `geoworker run`; --worker measures another geoworker than the one
// built beside the benchmark.
// Restore: a changelog of --restore-devices devices (3 pins each, 64 partitions) is restored by a worker
// with an empty state directory, as a new instance would on its first assignment: records per second into
// SQLite, then the time to load them into memory, and the changelog's bytes per device.
// Geocode: `geoworker geocode --input` on 2M random `lat,lon` lines (6 decimals, as GPS receivers report),
// whole process: start-up, reading the country index, every line and the output written to a file.
// Start-up: from process start to the first event, less the group join, with an empty store and with the
// restored store of --restore-devices devices.
// Latency: a worker runs while positions are produced at a steady rate, each stamped with its produce time
// and each crossing its device's pin; the time from produce to the resulting event's arrival at a consumer
// is taken for every event, beside the same stream read by a bare consumer (the floor). On 8 partitions by
// default: the mock broker finds a fetch's offset by walking the partition's message sets from the oldest
// (rdkafka_mock.c, "FIXME: Maintain an index"), so each fetch costs in proportion to the message sets it
// holds, and a steady stream over 64 partitions makes 8 times as many. At 64 its thread grew from half a
// core to 0.86 of one within 10 s with no worker at all, and the floor's p99 grew; a real broker
// indexes offsets.
import BenchSupport
import Foundation
import GeoCore
import Kafka
import Logging
import Synchronization
import TestSupport
import Worker

struct Options {
    var devices = 50_000
    var positions = 1_000_000
    var rate = 50_000
    var seconds = 10
    let partitions = 64
    /// The partition counts the latency part runs on, one after the other.
    var latencyPartitions = [8, 64]
    var restoreDevices = 1_000_000
    /// The one part to run, or nil for all.
    var only: String?
    /// Another build's geoworker to alternate with this one's in the throughput runs.
    var baseline: String?
    /// How many runs of each build alternate: more to tell small differences from this host's noise.
    var pairs = 3
    /// The geoworker to measure, instead of the one built beside this benchmark.
    var worker: String?
    /// Added to every `geoworker run`.
    var workerArguments: [String] = []

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            let text = iterator.next()
            let value = text.flatMap(Int.init)
            switch (argument, value) {
            case ("--only", _) where text != nil: only = text
            case ("--baseline", _) where text != nil: baseline = text
            case ("--worker", _) where text != nil: worker = text
            case ("--worker-arg", _) where text != nil: workerArguments.append(text!)
            case ("--devices", let value?): devices = value
            case ("--positions", let value?): positions = value
            case ("--rate", let value?): rate = value
            case ("--seconds", let value?): seconds = value
            case ("--latency-partitions", let value?): latencyPartitions = [value]
            case ("--restore-devices", let value?): restoreDevices = value
            case ("--pairs", let value?) where value > 0: pairs = value
            default:
                fail(
                    "usage: service-bench [--devices N] [--positions N] [--rate N] [--seconds S] [--latency-partitions N] "
                        + "[--restore-devices N] [--only throughput|compare|restore|startup|latency|geocode] [--baseline PATH [--pairs N]] [--worker PATH] [--worker-arg ARG]..."
                )
            }
        }
    }

    /// Whether `part` runs: every part without --only; `compare` is the throughput part's alternating runs only.
    func runs(_ part: String) -> Bool { only == nil || only == part || (only == "compare" && part == "throughput") }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("service-bench: \(message)\n".utf8))
    exit(1)
}

func log(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

let options = Options(arguments: CommandLine.arguments)
let logger: Logger = {
    var logger = Logger(label: "service-bench")
    logger.logLevel = .error
    return logger
}()
let cluster: MockCluster
do {
    cluster = try MockCluster(brokers: 1, logger: logger)
} catch {
    fail("mock cluster: \(error)")
}
let geoworker = options.worker ?? ChildProcess.builtExecutable("geoworker")
guard FileManager.default.isExecutableFile(atPath: geoworker) else { fail("build geoworker first: \(geoworker)") }

func makeTopics(_ prefix: String, partitions: Int = options.partitions) -> WorkerConfiguration.Topics {
    let topics = WorkerConfiguration.Topics(
        positions: "\(prefix)-positions",
        commands: "\(prefix)-commands",
        events: "\(prefix)-events",
        deadLetters: "\(prefix)-dead-letters"
    )
    do {
        for topic in [topics.positions, topics.commands, topics.events] {
            try cluster.createTopic(topic, partitions: partitions)
        }
        try cluster.createTopic(topics.deadLetters, partitions: 1)
    } catch {
        fail("topics: \(error)")
    }
    return topics
}

func makeProducer(linger: Duration) -> Producer {
    do {
        return try Producer(
            configuration: ProducerConfiguration(
                bootstrapServers: cluster.bootstrapServers,
                linger: linger,
                properties: ["queue.buffering.max.messages": "2000000", "batch.num.messages": "10000"]
            ),
            logger: logger
        )
    } catch {
        fail("producer: \(error)")
    }
}

/// Devices spread over western Europe, each with a home; its pins sit at home and 1 and 2 km east.
func home(of device: Int) -> (latitude: Double, longitude: Double) {
    (44.0 + Double(device % 250) * 0.03, 0.5 + Double(device / 250 % 200) * 0.05)
}

func json(_ text: String) -> [UInt8] { Array(text.utf8) }

func trackCommand(
    _ topics: WorkerConfiguration.Topics,
    device: Int,
    pin: Int,
    radius: Double,
    at time: Int64
)
    -> ProducerRecord
{
    let (latitude, longitude) = home(of: device)
    let id = "device-\(device)"
    let command = DeviceCommand.track(
        deviceId: id,
        pin: Pin(
            id: "pin-\(pin)",
            center: Coordinate(latitude: latitude, longitude: longitude + 0.0135 * Double(pin))!,
            radius: radius
        )!
    )
    return ProducerRecord(topic: topics.commands, key: json(id), value: command.json, timestampMilliseconds: time)
}

func position(
    _ topics: WorkerConfiguration.Topics,
    device: Int,
    longitudeOffset: Double,
    at time: Int64
) -> ProducerRecord {
    let (latitude, longitude) = home(of: device)
    let id = "device-\(device)"
    let text =
        #"{"deviceId":"\#(id)","lat":\#(latitude),"lon":\#(longitude + longitudeOffset),"timestamp":\#(time),"accuracy":5,"speed":13.9,"languages":["en-GB","fr-FR"]}"#
    return ProducerRecord(topic: topics.positions, key: json(id), value: json(text), timestampMilliseconds: time)
}

func produceAll(_ records: [ProducerRecord]) {
    let producer = makeProducer(linger: .milliseconds(20))
    var batches: [DeliveryBatch] = []
    for first in stride(from: 0, to: records.count, by: 100_000) {
        batches.append(producer.send(Array(records[first..<min(first + 100_000, records.count)])))
    }
    let failed = batches.flatMap { $0.wait() }.filter { !$0.isDelivered }
    producer.close()
    if let first = failed.first { fail("\(failed.count) records not delivered: \(first)") }
}

/// Runs `geoworker run` with `arguments` added, in a group, state directory and changelog topic of its own
/// (the mock cluster cannot create one); returns the process.
func startWorker(
    _ topics: WorkerConfiguration.Topics,
    partitions: Int,
    state: String,
    group: String = "bench-\(UUID())",
    changelogExists: Bool = false,
    executable: String = geoworker,
    _ arguments: [String]
) -> BackgroundProcess {
    do {
        if !changelogExists {
            try cluster.createTopic(DeviceChangelog.defaultTopic(groupID: group), partitions: partitions)
        }
        return try BackgroundProcess(
            executable,
            [
                "run", "--brokers", cluster.bootstrapServers,
                "--positions-topic", topics.positions, "--commands-topic", topics.commands,
                "--events-topic", topics.events, "--dead-letter-topic", topics.deadLetters,
                "--group-id", group, "--state-dir", state, "--http-port", "0",
                "--log-level", "info",
            ] + arguments + options.workerArguments
        )
    } catch {
        fail("cannot start geoworker: \(error)")
    }
}

let stateRoot = FileManager.default.temporaryDirectory.appendingPathComponent("service-bench-\(UUID())").path
defer { try? FileManager.default.removeItem(atPath: stateRoot) }
log(
    "service-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(options.devices) devices, "
        + "\(options.partitions) partitions, worker \(geoworker)"
)

let start: Int64 = 1_795_300_000_000

// MARK: Geocode

if options.runs("geocode") {
    let lineCount = 2_000_000
    var random = SplitMix64(seed: 18)
    var text: [UInt8] = []
    text.reserveCapacity(lineCount * 24)
    for _ in 0..<lineCount {
        let latitude = Double.random(in: -90...90, using: &random)
        let longitude = Double.random(in: -180...180, using: &random)
        text.append(contentsOf: String(format: "%.6f,%.6f\n", latitude, longitude).utf8)
    }
    let input = stateRoot + "-geocode.txt"
    guard FileManager.default.createFile(atPath: input, contents: Data(text)) else { fail("cannot write \(input)") }
    defer { try? FileManager.default.removeItem(atPath: input) }
    /// Lines per second of one whole `geocode --input` process of `executable`.
    func geocodeRate(_ executable: String) -> Double {
        let started = ContinuousClock.now
        let process: BackgroundProcess
        do {
            process = try BackgroundProcess(executable, ["geocode", "--input", input], keepOutput: true)
        } catch {
            fail("cannot start geoworker geocode: \(error)")
        }
        guard process.waitUntilExit() == .exited(0) else { fail("geocode failed:\n\(process.errors.suffix(2000))") }
        let seconds = (ContinuousClock.now - started).seconds
        let lines = process.output.utf8.count { $0 == UInt8(ascii: "\n") }
        guard lines == lineCount else { fail("geocode wrote \(lines) lines for \(lineCount)") }
        return Double(lineCount) / seconds
    }
    func millions(_ rates: [Double]) -> String {
        rates.map { String(format: "%.2f", $0 / 1e6) }.joined(separator: ", ")
    }
    var rates: [Double] = []
    var baselineRates: [Double] = []
    for _ in 0..<3 {
        rates.append(geocodeRate(geoworker))
        if let baseline = options.baseline { baselineRates.append(geocodeRate(baseline)) }
    }
    log(
        String(
            format: "geocode --input, whole process, %d random lines: %.2f M lines/s (best of 3: %@) (target 5)",
            lineCount,
            rates.max()! / 1e6,
            millions(rates)
        )
            + (baselineRates.isEmpty
                ? ""
                : String(
                    format: "; baseline, alternating: %.2f M lines/s (%@)",
                    baselineRates.max()! / 1e6,
                    millions(baselineRates)
                ))
    )
}

// MARK: Throughput

/// Preloads 3 pins per device and `options.positions` positions into topics of their own named after `prefix`;
/// returns the topics and the number of positions.
func preloadThroughput(_ prefix: String) -> (topics: WorkerConfiguration.Topics, positions: Int) {
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

if options.runs("throughput") || options.runs("first") {
    let (throughput, positionCount) = preloadThroughput("throughput")

    func rawRate() -> Double {
        let pass = rawPass(
            bootstrap: cluster.bootstrapServers,
            topic: throughput.positions,
            partitions: Int32(options.partitions),
            messages: positionCount,
            pattern: .drainReady
        )
        return pass.rate
    }

    /// The catch-ups' worker CPU time per message (µs), this build's (false) and the baseline's (true).
    var cpuPerMessage: [Bool: [Double]] = [:]
    /// Runs `geoworker run --until-caught-up` over the preloaded topics (on `applyThreads`, or the default);
    /// returns its rate from its first message to its last checkpoint, and prints it.
    func catchUp(
        applyThreads: Int?,
        changelog: Bool = true,
        baseline: Bool = false,
        on preload: (topics: WorkerConfiguration.Topics, positions: Int)? = nil
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
            ?? "default apply threads (\(WorkerConfiguration.defaultApplyThreads))"
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
                    cpu * 1e6 / Double(positions + options.devices * 3),
                    faults,
                    brokerCPU * 1e6 / Double(positions + options.devices * 3)
                )
        )
        cpuPerMessage[baseline, default: []].append(cpu * 1e6 / Double(positions + options.devices * 3))
        return rate
    }

    // The first catch-up after the preload ran a quarter slower than the next ones, whichever build ran it
    // (451-525k positions/s where the runs after it gave 613-780k, in four sets of issue 18's seventh session):
    // this build's first run of each set, so the comparisons were biased against it. One run first, not
    // counted, the baseline's when there is one; then the pairs alternate which build goes first.
    if options.only == "first" {
        // Fresh preloads, each caught up twice by fresh processes: what the first catch-up of a preload pays
        // for. Every other preload is read by raw librdkafka first, to tell the broker's first fetches apart.
        for round in 0..<4 {
            let fresh = preloadThroughput("first-\(round)")
            if round % 2 == 1 {
                log(String(format: "raw librdkafka first: %.0f positions/s", rawPass(
                    bootstrap: cluster.bootstrapServers, topic: fresh.topics.positions,
                    partitions: Int32(options.partitions), messages: fresh.positions, pattern: .drainReady
                ).rate))
            }
            let first = catchUp(applyThreads: nil, on: fresh)
            let second = catchUp(applyThreads: nil, on: fresh)
            log(String(format: "fresh preload %d: first / second catch-up %.2f", round, first / second))
        }
        exit(0)
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    if options.only != "compare" {
        // The figure: three rounds on the one preload, each a fresh worker process beside a plain librdkafka
        // pass, with no warm-up: a user's first run is the one they judge. Plain librdkafka reads first in the
        // middle round only, so the worker meets the just-written preload first as well.
        var ratios: [Double] = []
        var rates: [Double] = []
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
            log(String(format: "round %d: raw librdkafka %.0f positions/s; geoworker / raw %.2f", round + 1, raw, rate / raw))
            ratios.append(rate / raw)
            rates.append(rate)
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
        log(String(format: "worker CPU per position: %.2f us by the median of three rounds (target 1.5)", median(cpu)))
    }
    if options.baseline != nil {
        // The first catch-up after the preload once ran a quarter slower whichever build ran it: one run first,
        // not counted (the baseline's); then the pairs alternate which build goes first.
        log("warm-up, not counted:")
        _ = catchUp(applyThreads: nil, baseline: true)
    }
    if options.baseline != nil {
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
        let cpu = cpuPerMessage[false, default: []].sorted()
        let baselineCPU = cpuPerMessage[true, default: []].sorted()
        log(
            String(
                format:
                    "worker CPU per message (the whole process, all threads), alternating runs: this build %.2f us, "
                    + "baseline %.2f us by medians (%.2fx less)",
                cpu[cpu.count / 2],
                baselineCPU[baselineCPU.count / 2],
                baselineCPU[baselineCPU.count / 2] / cpu[cpu.count / 2]
            )
        )
    }
    if options.only != "compare" {
        // For comparison: one apply thread, and the changelog off.
        let oneThread = catchUp(applyThreads: 1)
        let withoutChangelog = catchUp(applyThreads: nil, changelog: false)
        log(String(format: "one apply thread: %.0f positions/s; changelog off: %.0f positions/s", oneThread, withoutChangelog))
    }
}

// MARK: Restore

/// The topics whose changelog the restore run restores, once it ran: its state directory then holds the
/// restored devices, which the start-up run starts from.
var restoredStore: (topics: WorkerConfiguration.Topics, group: String)?

if options.runs("restore") || options.runs("startup") {

    /// A device as a worker leaves it after a while: three pins with titles, a last fix, a country, languages.
    func restoredState(_ device: Int, partition: Int32) -> DeviceState {
        let (latitude, longitude) = home(of: device)
        let center = Coordinate(latitude: latitude, longitude: longitude)!
        return DeviceState(
            deviceId: "device-\(device)",
            pins: (0..<3).map { pin in
                TrackedPin(
                    pin: Pin(
                        id: "pin-\(pin)",
                        center: Coordinate(latitude: latitude, longitude: longitude + 0.0135 * Double(pin))!,
                        radius: 400,
                        title: "Depot \(pin)"
                    )!,
                    membership: pin == 0 ? .inside : .outside
                )
            },
            lastFix: Fix(coordinate: center, timestamp: start + Int64(device), accuracy: 8),
            languages: ["fr-FR", "en"],
            country: "FR",
            inputPartition: partition,
            appliedOffsets: AppliedOffsets(positions: Int64(device), commands: Int64(device / 3))
        )
    }

    let restoreTopics = makeTopics("restore")
    let restoreGroup = "bench-restore-\(UUID())"
    let restoreChangelog = DeviceChangelog.defaultTopic(groupID: restoreGroup)
    do {
        try cluster.createTopic(restoreChangelog, partitions: options.partitions)
    } catch {
        fail("changelog topic: \(error)")
    }
    var changelogBytes = 0
    var changelogRecords: [ProducerRecord] = []
    changelogRecords.reserveCapacity(options.restoreDevices)
    for device in 0..<options.restoreDevices {
        let partition = Int32(device % options.partitions)
        let bytes = DeviceStateEncoding.encode(restoredState(device, partition: partition))
        changelogBytes += bytes.count
        changelogRecords.append(
            ProducerRecord(
                topic: restoreChangelog,
                partition: partition,
                key: Array("device-\(device)".utf8),
                value: bytes
            )
        )
    }
    let changelogPreload = ContinuousClock.now
    produceAll(changelogRecords)
    changelogRecords = []
    log(
        String(
            format: "changelog: %d devices, %.0f bytes per device (3 pins with titles), preloaded in %.1f s",
            options.restoreDevices,
            Double(changelogBytes) / Double(max(1, options.restoreDevices)),
            (ContinuousClock.now - changelogPreload).seconds
        )
    )
    // A short session: the mock cluster holds a member that left until its session times out, and the
    // start-up run joins this group after it.
    let restoring = startWorker(
        restoreTopics,
        partitions: options.partitions,
        state: stateRoot + "/restore",
        group: restoreGroup,
        changelogExists: true,
        ["--until-caught-up", "--kafka", "consumer.session.timeout.ms=6000"]
    )
    guard restoring.waitUntilExit() == .exited(0) else { fail("restore run failed:\n\(restoring.errors.suffix(3000))") }
    let restoreLines = restoring.errors.split(separator: "\n").filter { $0.contains("restored partition") }
    let restoredRecords = restoreLines.compactMap { $0.firstMatch(of: /\srecords=(\d+)/).flatMap { Int($0.1) } }.reduce(
        0,
        +
    )
    guard restoredRecords == options.restoreDevices,
        let restoreSeconds = restoreLines.first?.firstMatch(of: /elapsed=([0-9.e-]+) seconds/).flatMap({ Double($0.1) }
        ),
        let assigned = restoring.errors.split(separator: "\n").first(where: {
            $0.contains("assigned \(2 * options.partitions) partitions")
        }),
        let assignSeconds = assigned.firstMatch(of: /elapsed=([0-9.e-]+) seconds/).flatMap({ Double($0.1) })
    else { fail("restored \(restoredRecords) of \(options.restoreDevices):\n\(restoring.errors.suffix(3000))") }
    log(
        String(
            format: "restore: %d devices from %d changelog partitions in %.2f s (%.0f devices/s into SQLite); "
                + "with loading them into memory %.2f s (%.0f devices/s)",
            restoredRecords,
            options.partitions,
            restoreSeconds,
            Double(restoredRecords) / restoreSeconds,
            assignSeconds,
            Double(restoredRecords) / assignSeconds
        )
    )
    restoredStore = (restoreTopics, restoreGroup)
}

// MARK: Start-up

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

if options.runs("startup") {
    let now = nowMilliseconds()
    let empty = makeTopics("startup", partitions: 8)
    let emptyGroup = "bench-startup-\(UUID())"
    produceAll([trackCommand(empty, device: 0, pin: 0, radius: 400, at: now - 1000)])
    timeStartUp(
        "empty store",
        topics: empty,
        partitions: 8,
        group: emptyGroup,
        changelogExists: false,
        state: stateRoot + "/startup-empty",
        trigger: position(empty, device: 0, longitudeOffset: 0, at: now)
    )
    if let (topics, group) = restoredStore {
        // One of the restored devices (inside its pin 0) reports from 4 km east: it leaves the pin. Sent to
        // another partition than the one its state came from, so that the restored state's applied offsets
        // (made up for the benchmark) do not mark it as applied already; the device is held all the same.
        let device = 1
        var trigger = position(topics, device: device, longitudeOffset: 0.05, at: now)
        trigger.partition = 0
        timeStartUp(
            "a store of \(options.restoreDevices) devices",
            topics: topics,
            partitions: options.partitions,
            group: group,
            changelogExists: true,
            state: stateRoot + "/restore",
            trigger: trigger
        )
    }
}

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
                groupID: "latency-probe",
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
                    if let produced = record.timestampMilliseconds { samples.append(Sample(total: now - produced)) }
                    continue
                }
                record.withValue { value in
                    guard let value, find(geofence, in: value) != nil, let end = find(time, in: value) else { return }
                    let text = UnsafeRawBufferPointer(rebasing: value[end..<min(value.count, end + 24)])
                    guard let produced = Timestamp.parseRFC3339(text) else { return }
                    let sent = record.timestampMilliseconds ?? now
                    samples.append(Sample(total: now - produced, toWorkerSend: sent - produced))
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

/// "p50 a, p90 b, p99 c, max d" of `values`.
func percentiles(_ values: [Int64]) -> String {
    let sorted = values.sorted()
    func at(_ p: Double) -> Int64 { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }
    return "p50 \(at(0.5)), p90 \(at(0.9)), p99 \(at(0.99)), max \(sorted.last!)"
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
    // librdkafka's mock broker answers a fetch that found nothing only after fetch.wait.max.ms (500 ms by
    // default), even when data arrives meanwhile (a real broker answers as soon as data is there): a short
    // wait keeps the mock from adding up to half a second to every hop.
    let live = startWorker(
        latencyTopics,
        partitions: partitions,
        state: stateRoot + "/latency-\(partitions)",
        ["--kafka", "consumer.fetch.wait.max.ms=5"]
    )
    let joinDeadline = ContinuousClock.now + .seconds(60)
    while !live.errors.contains("assigned \(2 * partitions) partitions") {
        guard ContinuousClock.now < joinDeadline, live.isRunning else {
            fail("the worker did not start:\n\(live.errors.suffix(2000))")
        }
        Thread.sleep(forTimeInterval: 0.05)
    }
    let probe = startProbe(topic: latencyTopics.events, readsEvents: true, partitions: partitions)
    let run = produceSteadily(latencyTopics)
    let expected = max(0, run.sent - options.devices)
    probe.waitFor(expected)
    let samples = probe.stop()
    live.send(SIGTERM)
    _ = live.waitUntilExit()
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
}

if options.runs("latency") {
    for partitions in options.latencyPartitions { measureLatency(partitions: partitions) }
}

/// User and system CPU time of the children this process has waited for, in seconds.
func childrenCPUSeconds() -> Double { cpuSeconds(RUSAGE_CHILDREN.rawValue) }

/// User and system CPU time of this process (the mock broker's threads among them), in seconds.
func ownCPUSeconds() -> Double { cpuSeconds(RUSAGE_SELF.rawValue) }

/// Minor page faults (pages first touched or mapped) of the children this process has waited for.
func childrenMinorFaults() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return usage.ru_minflt
}

private func cpuSeconds(_ who: Int32) -> Double {
    var usage = rusage()
    getrusage(who, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
