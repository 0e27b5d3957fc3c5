// End-to-end benchmark of the service, against librdkafka's mock cluster in this process.
//
//   swift run -c release service-bench [--devices N] [--positions N] [--rate N] [--seconds S]
//                                      [--latency-partitions N] [--restore-devices N]
//                                      [--steady-devices N] [--steady-seconds S]
//                                      [--address-devices N] [--address-seconds S] [--catalog-geofences N]
//                                      [--only throughput|first|compare|restore|startup|latency|steady|geocode|addresses|
//                                              catalog]
//                                      [--baseline PATH [--pairs N]] [--worker PATH] [--worker-arg ARG]...
//                                      [--baseline-arg ARG]... [--broker mock|noida]
//
// Throughput: preloads 3 pins per device and the positions (64 partitions: the mock keeps only about 5 MB
// per partition), then three rounds on that one preload, each a fresh `geoworker run --until-caught-up`
// process and a plain librdkafka pass over the positions topic, with no warm-up: the ratio of the two rates
// by the median of the rounds, the first catch-up against the later two, and the worker's CPU per position.
// Rates count from the first message to the last (the worker reports its own, after its final checkpoint); the
// worker's start-up and group join are printed apart. Then one run on one apply thread and one with the
// changelog off, for comparison. With --baseline (another build's geoworker, such as the commit a performance
// change starts from), the catch-ups alternate between this build's worker and that one on the same preload,
// three of each (--pairs), each build going first in every other pair, after a warm-up run of the baseline's
// that is not counted; `--only compare` runs those alternating catch-ups and nothing else. `--only first`
// catches up four fresh preloads twice each (plain librdkafka reading every other one first): what the first
// catch-up of a preload pays for.
// --baseline-arg passes one to the baseline's runs only (the same build as baseline, another setting:
// `--baseline-arg --processing-guarantee --baseline-arg exactly-once ...`); --worker-arg passes an argument to every
// `geoworker run`; --worker measures another geoworker than the one
// built beside the benchmark. --broker noida runs on noida-db instead of the mock (BenchBroker.swift): its latency
// figures only, its consumers spin.
// Restore: a changelog of --restore-devices devices (3 pins each, 64 partitions) is restored by a worker
// with an empty state directory, as a new instance would on its first assignment: records per second into
// SQLite, then the time to load them into memory, and the changelog's bytes per device.
// Geocode: `geoworker geocode --input` on 2M random `lat,lon` lines (6 decimals, as GPS receivers report),
// whole process: start-up, reading the country index, every line and the output written to a file.
// Start-up: from process start to the first event, less the group join, with an empty store and with the
// restored store of --restore-devices devices.
// Steady (Steady.swift): a fleet of --steady-devices reporting once a second without events, the worker's CPU per
// position while it keeps up.
// Addresses (Addresses.swift, only with --only addresses): walkers across Monaco with street addresses prefetched from
// a real Nominatim: the cache's hit rate and the asks dropped.
// Catalog (Catalog.swift, only with --only catalog, and --broker noida for a million): the fleet catalog's read at start
// and a change's time to force.
// Latency: a worker runs while positions are produced at a steady rate, each stamped with its produce time
// and each crossing its device's pin; the time from produce to the resulting event's arrival at a consumer
// is taken for every event, beside the same stream read by a bare consumer (the floor). On 8 and then 64
// partitions (--latency-partitions N for one count). At 64 the mock broker's own cost grows: it finds a
// fetch's offset by walking the partition's message sets from the oldest (rdkafka_mock.c, "FIXME: Maintain an
// index") and answers with one message set per partition, so each fetch costs in proportion to the message
// sets it holds, and a steady stream over 64 partitions makes 8 times as many; a real broker indexes offsets.
import BenchSupport
import Foundation
import GeoCore
import Kafka
import Logging
import Synchronization
import TestSupport
import Worker

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
let cluster = BenchBroker.start(options.broker)
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
        if !changelogExists && !cluster.createsChangelogs {
            try cluster.createTopic(DeviceChangelog.defaultTopic(groupId: group), partitions: partitions)
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

if options.runs("geocode") { measureGeocode() }

// MARK: Throughput

if options.runs("throughput") || options.runs("first") { measureThroughput() }

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
    let restoreChangelog = DeviceChangelog.defaultTopic(groupId: restoreGroup)
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

if options.runs("latency") {
    for partitions in options.latencyPartitions { measureLatency(partitions: partitions) }
}

if options.runs("steady") { measureSteadyStream() }
// Only when asked for: it needs the Nominatim that `scripts/setup.sh test` sets up.
if options.only == "addresses" { measureAddressPrefetching() }
if options.only == "catalog" { measureCatalog() }
cluster.stop()
