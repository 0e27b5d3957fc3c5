// The catalog part of service-bench (issue 64): a fleet catalog topic of --catalog-geofences geofences on 16
// partitions, half circles of 50 to 500 m and half polygons of 10 to 200 vertices, 20 in each area (as geocore-bench's
// catalog part); then the time a fresh worker takes to read it whole at start (its own `catalog read` line, and from
// its process start), and the time until a geofence put while it runs is in force (its `GET /geofences` answers it).
// The mock cluster keeps about 5 MB a partition, too little for a million: run it with `--broker noida`.
import BenchSupport
import Foundation
import GeoCore
import Kafka
import TestSupport
import Worker

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

func measureCatalog() {
    let prefix = "catalog-\(UUID())"
    let topics = makeTopics(prefix, partitions: 8)
    let catalogTopic = "\(prefix)-geofences"
    do {
        try cluster.createTopic(catalogTopic, partitions: 16)
    } catch {
        fail("catalog topic: \(error)")
    }
    let count = options.catalogGeofences
    let clock = ContinuousClock()
    let producing = clock.now
    let bytes = produceCatalog(count, topic: catalogTopic)
    log(
        String(
            format: "catalog: %d geofences (%.0f MB of JSON) produced into 16 partitions in %.1f s",
            count,
            Double(bytes) / 1e6,
            (clock.now - producing).seconds
        )
    )
    var arguments = ["--catalog", "--geofences-topic", catalogTopic, "--http-devices"]
    if case .noida = cluster {
        // noida-db answers a fetch with everything from the offset on, whatever the fetch's size limits: a million
        // geofences are one response of more than a gigabyte, past librdkafka's default 100 MB.
        arguments += ["--kafka", "consumer.receive.message.max.bytes=2147483647"]
    }
    // Read by a fresh worker three times (alternating with --baseline's, when given): one preload, several figures.
    var builds = [("this build", geoworker)]
    if let baseline = options.baseline { builds.append(("baseline", baseline)) }
    var worker: BackgroundProcess?
    for round in 0..<3 {
        for (label, executable) in round % 2 == 0 ? builds : builds.reversed() {
            worker?.send(SIGTERM)
            _ = worker?.waitUntilExit()
            let (started, elapsed, sinceStart) = readCatalog(
                topics,
                state: "\(stateRoot)/catalog-\(round)-\(label.count)",
                executable: executable,
                arguments
            )
            worker = started
            log(
                String(
                    format: "catalog: %@, read whole at start in %.1f s (the worker's `catalog read`; goal < 20 s), "
                        + "%.1f s from the process's start",
                    label,
                    elapsed,
                    sinceStart
                )
            )
        }
    }
    guard let worker else { fail("no worker") }
    defer {
        worker.send(SIGTERM)
        _ = worker.waitUntilExit()
    }
    /// Fails, stopping the worker first (`fail` exits, and runs no `defer`).
    func giveUp(_ message: String) -> Never {
        worker.send(SIGKILL)
        cluster.stop()
        fail(message)
    }
    let port = operationsPort(of: worker)
    var inForce: [Double] = []
    for change in 0..<10 {
        let id = "change-\(change)"
        let (latitude, longitude) = (10.0 + Double(change), 20.0)
        let record = ProducerRecord(
            topic: catalogTopic,
            key: json(id),
            value: json(#"{"id":"\#(id)","lat":\#(latitude),"lon":\#(longitude),"radius":200,"tags":["bench"]}"#),
            timestampMilliseconds: nowMilliseconds()
        )
        let sent = clock.now
        produceAll([record])
        let query = "bbox=\(longitude - 0.01),\(latitude - 0.01),\(longitude + 0.01),\(latitude + 0.01)"
        while !answers(port, "/geofences?\(query)", containing: id) {
            guard clock.now < sent + .seconds(60) else { giveUp("geofence \(id) not in force after 60 s") }
            Thread.sleep(forTimeInterval: 0.002)
        }
        inForce.append((clock.now - sent).seconds)
    }
    inForce.sort()
    log(
        String(
            format: "catalog: a geofence put while the worker runs, produced to in force (its GET /geofences): "
                + "median %.0f ms, max %.0f ms of %d (goal < 1 s)",
            inForce[inForce.count / 2] * 1000,
            inForce.last! * 1000,
            inForce.count
        )
    )
}

/// Starts a worker of `executable` on a fresh group and state and waits until it has read the catalog; returns it with
/// the read's time as it logs it, and the time from its start.
private func readCatalog(
    _ topics: WorkerConfiguration.Topics,
    state: String,
    executable: String,
    _ arguments: [String]
) -> (BackgroundProcess, elapsed: Double, sinceStart: Double) {
    let clock = ContinuousClock()
    let spawned = clock.now
    let worker = startWorker(topics, partitions: 8, state: state, executable: executable, arguments)
    let read = /elapsed=([0-9.e-]+) seconds.*\[Worker\] catalog read/
    while true {
        guard worker.isRunning, clock.now < spawned + .seconds(600) else {
            worker.send(SIGKILL)
            cluster.stop()
            fail("the worker did not read the catalog:\n\(worker.errors.suffix(2000))")
        }
        if let match = worker.errors.firstMatch(of: read), let elapsed = Double(match.1) {
            return (worker, elapsed, (clock.now - spawned).seconds)
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

/// Produces `count` catalog records into `topic`; returns their bytes.
private func produceCatalog(_ count: Int, topic: String) -> Int {
    var random = SplitMix64(seed: 64)
    let producer = makeProducer(linger: .milliseconds(20))
    defer { producer.close() }
    var bytes = 0
    var pending: [DeliveryBatch] = []
    var batch: [ProducerRecord] = []
    let perArea = 20
    var center = (latitude: 0.0, longitude: 0.0)
    for index in 0..<count {
        if index % perArea == 0 {
            center = (Double.random(in: -60...70, using: &random), Double.random(in: -179..<179, using: &random))
        }
        let value = json(catalogRecord(index, perArea: perArea, around: center, random: &random))
        bytes += value.count
        batch.append(ProducerRecord(topic: topic, key: json("g-\(index)"), value: value, timestampMilliseconds: 0))
        if batch.count == 10_000 || index == count - 1 {
            pending.append(producer.send(batch))
            batch = []
            // A few batches in flight at most: a million polygons are more than a gigabyte of JSON.
            if pending.count > 4 { waitDelivered(pending.removeFirst()) }
        }
    }
    pending.forEach(waitDelivered)
    return bytes
}

private func waitDelivered(_ batch: DeliveryBatch) {
    let failed = batch.wait().filter { !$0.isDelivered }
    if let first = failed.first { fail("\(failed.count) catalog records not delivered: \(first)") }
}

/// Geofence `index`: a circle at even indexes, a polygon of 10 to 200 vertices at odd ones, within a kilometre of
/// `center`, its tag one of eight fleets.
private func catalogRecord(
    _ index: Int,
    perArea: Int,
    around center: (latitude: Double, longitude: Double),
    random: inout SplitMix64
) -> String {
    let metresEast = 111_195 * _cos(center.latitude * .pi / 180)
    let latitude = center.latitude + Double.random(in: -1...1, using: &random) * 1_000 / 111_195
    let longitude = center.longitude + Double.random(in: -1...1, using: &random) * 1_000 / metresEast
    let radius = Double.random(in: 50...500, using: &random)
    let head = #"{"id":"g-\#(index)","tags":["fleet-\#(index / perArea % 8)"],"#
    guard index % 2 == 1 else {
        return head + String(format: #""lat":%.6f,"lon":%.6f,"radius":%.1f}"#, latitude, longitude, radius)
    }
    let vertices = Int.random(in: 10...200, using: &random)
    var ring: [String] = (0..<vertices).map { corner in
        let angle = Double(corner) / Double(vertices) * 2 * .pi
        return String(
            format: "[%.6f,%.6f]",
            longitude + radius * _cos(angle) / metresEast,
            latitude + radius * _sin(angle) / 111_195
        )
    }
    ring.append(ring[0])
    return head + #""shape":{"type":"Polygon","coordinates":[["# + ring.joined(separator: ",") + "]]}}"
}

/// Whether the worker's `path` answers 200 with a body holding `text`.
private func answers(_ port: Int, _ path: String, containing text: String) -> Bool {
    let answered = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var found = false
    URLSession.shared.dataTask(with: URL(string: "http://127.0.0.1:\(port)\(path)")!) { data, response, _ in
        found =
            (response as? HTTPURLResponse)?.statusCode == 200
            && data.map { String(decoding: $0, as: UTF8.self).contains(text) } ?? false
        answered.signal()
    }.resume()
    answered.wait()
    return found
}
