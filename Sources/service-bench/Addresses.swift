// The addresses part of service-bench (`--only addresses`; not in a run of every part: it needs the Nominatim of
// `scripts/nominatim.sh`, which `scripts/setup.sh test` imports). Street addresses prefetched on a soak-like stream:
// --address-devices walkers (100,000) cross Monaco at a walking pace, each reporting every 10 s, for --address-seconds
// (300), while the worker runs with `address.provider` set to that Nominatim, `address.prefetch` on, 100 m buckets and
// its default pace of 1 request a second. Printed from the worker's metrics at the end: the prefetches' looks at the
// cache and their hit rate, the requests, the asks dropped, and the buckets the walkers entered.
//
// The catch-up throughput with the provider on and off is the throughput part's alternating runs, the baseline being
// this build with a config file that sets the provider (docs/performance.md):
//   service-bench --only compare --baseline .build/release/geoworker --baseline-arg --config --baseline-arg FILE
import BenchSupport
import Foundation
import Kafka
import TestSupport
import Worker

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func measureAddressPrefetching() {
    let nominatim = startNominatim()
    let partitions = 8
    let walkers = options.addressDevices
    let topics = makeTopics("addresses", partitions: partitions)
    let config = stateRoot + "/addresses.json"
    let settings = #"{"address":{"provider":"\#(nominatim.baseURL)","prefetch":true,"userAgent":"geoworker-bench"}}"#
    do {
        try FileManager.default.createDirectory(atPath: stateRoot, withIntermediateDirectories: true)
        try Data(settings.utf8).write(to: URL(fileURLWithPath: config))
    } catch {
        fail("cannot write \(config): \(error)")
    }
    let worker = startWorker(topics, partitions: partitions, state: stateRoot + "/addresses", ["--config", config])
    let port = operationsPort(of: worker)
    let producer = makeProducer(linger: .milliseconds(20))
    var walk = MonacoWalk(walkers: walkers)
    let clock = ContinuousClock()
    let start = clock.now
    let rounds = options.addressSeconds / MonacoWalk.reportEvery
    for round in 0..<rounds {
        let due = start + .seconds(round * MonacoWalk.reportEvery)
        if clock.now < due { Thread.sleep(forTimeInterval: (due - clock.now).seconds) }
        let time = nowMilliseconds()
        let records = walk.step().enumerated().map { walker, point in
            let id = "walker-\(walker)"
            let text =
                #"{"deviceId":"\#(id)","lat":\#(point.latitude),"lon":\#(point.longitude),"timestamp":\#(time),"accuracy":8}"#
            return ProducerRecord(
                topic: topics.positions,
                key: json(id),
                value: json(text),
                timestampMilliseconds: time
            )
        }
        let undelivered = producer.send(records).wait().filter { !$0.isDelivered }.count
        if undelivered > 0 { fail("\(undelivered) positions undelivered") }
    }
    producer.close()
    Thread.sleep(forTimeInterval: 2)
    let metrics = readMetrics(port)
    worker.send(SIGTERM)
    _ = worker.waitUntilExit()
    nominatim.stop()
    let hits = metrics["geoworker_address_cache_hits_total"] ?? 0
    let misses = metrics["geoworker_address_cache_misses_total"] ?? 0
    let requests = metrics["geoworker_address_requests_total"] ?? 0
    let dropped = metrics["geoworker_address_asks_dropped_total"] ?? 0
    let consumed = metrics["geoworker_positions_consumed_total"] ?? 0
    log(
        String(
            format:
                "addresses prefetched: %d walkers across Monaco, a fix every %d s for %d s (%.0f positions consumed), "
                + "100 m buckets, 1 request/s: %d buckets entered (%d distinct), %.0f looks at the cache, hit rate %.1f %%, "
                + "%.0f requests, %.0f asks dropped",
            walkers,
            MonacoWalk.reportEvery,
            rounds * MonacoWalk.reportEvery,
            consumed,
            walk.bucketsEntered,
            walk.distinctBuckets.count,
            hits + misses,
            100 * hits / max(1, hits + misses),
            requests,
            dropped
        )
    )
}

/// Walkers crossing Monaco at 1.4 m/s, each on a heading of its own that turns back at the box's edges, from
/// a fixed seed: the same walk every run.
struct MonacoWalk {
    static let reportEvery = 10
    static let (south, north, west, east) = (43.7270, 43.7500, 7.4100, 7.4380)
    private var points: [(latitude: Double, longitude: Double, heading: Double)]
    private(set) var bucketsEntered = 0
    private(set) var distinctBuckets: Set<Int64> = []

    init(walkers: Int) {
        var generator = SplitMix64(seed: 50)
        func unit() -> Double { Double(generator.next() >> 11) / Double(1 << 53) }
        points = []
        points.reserveCapacity(walkers)
        for _ in 0..<walkers {
            points.append(
                (
                    Self.south + (Self.north - Self.south) * unit(),
                    Self.west + (Self.east - Self.west) * unit(),
                    2 * .pi * unit()
                )
            )
        }
    }

    /// Moves every walker one report's distance and returns where each is.
    mutating func step() -> [(latitude: Double, longitude: Double)] {
        let metres = 1.4 * Double(Self.reportEvery)
        return points.indices.map { index in
            var point = points[index]
            let before = Self.bucket(point.latitude, point.longitude)
            point.latitude += metres * cos(point.heading) / 111_320
            point.longitude += metres * sin(point.heading) / (111_320 * cos(point.latitude * .pi / 180))
            if point.latitude < Self.south || point.latitude > Self.north { point.heading = .pi - point.heading }
            if point.longitude < Self.west || point.longitude > Self.east { point.heading = -point.heading }
            point.latitude = min(max(point.latitude, Self.south), Self.north)
            point.longitude = min(max(point.longitude, Self.west), Self.east)
            points[index] = point
            let after = Self.bucket(point.latitude, point.longitude)
            if after != before { bucketsEntered += 1 }
            distinctBuckets.insert(after)
            return (point.latitude, point.longitude)
        }
    }

    /// About 100 m squares, for the counts printed (the worker's own buckets are `AddressBucket`'s).
    private static func bucket(_ latitude: Double, _ longitude: Double) -> Int64 {
        Int64((latitude * 1_113.2).rounded(.down)) << 32 | Int64((longitude * 1_113.2 * 0.7226).rounded(.down) + 1e6)
    }
}

/// Starts the Nominatim API of `scripts/nominatim.sh` on a free port, or fails saying how to set it up.
private func startNominatim() -> NominatimServer {
    do {
        return try blockingResult { try await NominatimServer() }.get()
    } catch {
        fail("Nominatim: \(error) (set up by scripts/setup.sh test)")
    }
}

/// The worker's operations port, from its log.
func operationsPort(of worker: BackgroundProcess) -> Int {
    let deadline = ContinuousClock.now + .seconds(60)
    while ContinuousClock.now < deadline && worker.isRunning {
        if let port = worker.errors.firstMatch(of: /port=(\d+) \[\w+\] HTTP endpoints listening/).flatMap({ Int($0.1) })
        {
            return port
        }
        Thread.sleep(forTimeInterval: 0.05)
    }
    fail("the worker did not open its operations port:\n\(worker.errors.suffix(2000))")
}

/// The worker's metrics without labels, by name.
private func readMetrics(_ port: Int) -> [String: Double] {
    let answered = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var body: Data?
    URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:\(port)/metrics")!) { data, _, _ in
        body = data
        answered.signal()
    }.resume()
    answered.wait()
    guard let data = body else { fail("cannot read the worker's metrics") }
    var metrics: [String: Double] = [:]
    for line in String(decoding: data, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
        let parts = line.split(separator: " ")
        if parts.count == 2, let value = Double(parts[1]) { metrics[String(parts[0])] = value }
    }
    return metrics
}
