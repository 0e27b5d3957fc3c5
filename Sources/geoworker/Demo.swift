import Foundation
import GeoCore
import Kafka
import Logging
import Metrics
import Operations
import PartitionOffsets
import Prometheus
import Worker

/// `geoworker demo`: the real pipeline on the bundled sample trace, on an embedded Kafka (librdkafka's mock cluster on
/// loopback TCP) or on a broker the user names.
///
/// Creates the topics, produces the trace (positions first, then commands, so the timestamp merge has to
/// put each `track` before the positions that follow it), runs a ``Worker`` until it has caught up, then
/// reads the events topic and prints one readable line per event. With `serve`, the worker then goes on
/// live on the same Kafka, with the operations page at the printed address.
enum Demo {
    /// Where `geoworker demo --serve` serves the page.
    struct Serve {
        var host = "127.0.0.1"
        var port = 8080
    }

    /// The Kafka the demo runs on.
    enum Broker {
        /// librdkafka's mock cluster, in this process; it goes with the demo.
        case embedded
        /// A running cluster (`bootstrap.servers`), with librdkafka properties for every client (`consumer.` and
        /// `producer.` prefixes as for `geoworker run`). The demo's topics are new ones, left there afterwards.
        case existing(brokers: String, kafkaProperties: [String: String])
    }

    /// The embedded cluster keeps a member that left (the catch-up worker) in the group until its session
    /// times out, so the live worker of `--serve` would wait 45 s (librdkafka's default) for the partitions.
    static let groupTiming = ["consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "500"]
    /// How many partitions each of the demo's input and event topics has.
    static let partitions = 4

    /// Runs the demo, handing each output line to `print`.
    ///
    /// - Parameters:
    ///   - broker: where Kafka is.
    ///   - stateDir: where the worker keeps its state; a fresh temporary directory by default.
    ///   - serve: keep the worker and the operations page running after the trace, at this address.
    ///   - logger: where the demo's worker logs.
    ///   - print: what receives each output line.
    /// - Returns: the events, as CloudEvents JSON values, in event-time order.
    /// - Throws: the cluster's or the worker's error.
    @discardableResult
    static func run(
        on broker: Broker = .embedded,
        stateDir: String? = nil,
        serve: Serve? = nil,
        logger: Logger = Logger(label: "geoworker.demo"),
        print: (String) -> Void
    ) async throws -> [[UInt8]] {
        let kafka = try DemoKafka(broker, logger: logger)
        try await kafka.createTopics()

        let trace = try loadTrace()
        let topics = kafka.topics
        let producer = try Producer(configuration: kafka.producerConfiguration, logger: logger)
        // The trace names its topics by their role: "positions" and "commands".
        let ordered =
            trace.filter { $0.topic == "positions" }.map { $0.onTopic(topics.positions) }
            + trace.filter { $0.topic == "commands" }.map { $0.onTopic(topics.commands) }
        let reports = await producer.send(ordered).reports()
        await producer.close()
        if let failed = reports.first(where: { !$0.isDelivered }) {
            throw CommandFailure("geoworker demo: could not load the trace into \(kafka.name): \(failed)")
        }
        print("demo: \(kafka.name) at \(kafka.brokers); produced \(trace.count) messages of the sample trace")
        if case .existing = broker { print("demo: topics \(kafka.topicList), group \(kafka.groupId)") }

        let directory =
            stateDir
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "geoworker-demo-\(ProcessInfo.processInfo.processIdentifier)"
            ).path
        // A directory of the demo's own goes with it: nothing is left behind but the topics of a user's Kafka.
        defer { if stateDir == nil { try? FileManager.default.removeItem(atPath: directory) } }
        // One feed for the catch-up worker and the live one: the page opens on the trace's latest events.
        let feed = EventFeed(metricsFactory: NOOPMetricsHandler.instance)
        let counters = try await catchUp(kafka, directory: directory, feed: feed, logger)
        print(
            "demo: worker applied \(counters.positions) positions and \(counters.commands) commands; "
                + "state in \(directory)\(stateDir == nil ? " (removed when the demo ends)" : "")"
        )

        let events = try await readAll(topic: topics.events, from: kafka, logger: logger)
        print("")
        for event in events { print(EventLine.format(event.value)) }
        print("")
        switch broker {
        case .embedded:
            print("demo: \(events.count) events; the same pipeline runs against a real Kafka with `geoworker run`")
        case .existing:
            print("demo: \(events.count) events; the topics stay at \(kafka.brokers) for inspection")
        }
        if let serve { try await Self.serve(serve, kafka, directory: directory, feed: feed) }
        return events.map(\.value)
    }

    /// Runs a worker until it has caught up with the trace; it is gone (its state directory free) on return.
    private static func catchUp(
        _ kafka: DemoKafka,
        directory: String,
        feed: EventFeed,
        _ logger: Logger
    ) async throws -> ProcessingCounters {
        let worker = try Worker(
            configuration: kafka.workerConfiguration(directory: directory, untilCaughtUp: true),
            logger: logger,
            feed: feed
        )
        try await worker.run()
        return worker.counters
    }

    /// Keeps a worker consuming live from the embedded Kafka (resuming after the trace from the demo's store)
    /// and serves its operations endpoints with the device endpoints and the page on, until SIGINT or SIGTERM.
    private static func serve(_ serve: Serve, _ kafka: DemoKafka, directory: String, feed: EventFeed) async throws {
        let logger = Logger(label: "geoworker.demo")
        let registry = PrometheusCollectorRegistry()
        let worker = try Worker(
            configuration: kafka.workerConfiguration(directory: directory, untilCaughtUp: false),
            logger: logger,
            metricsFactory: OperationsServer.metricsFactory(registry: registry),
            feed: feed
        )
        let announce = AddressAnnouncement(
            host: serve.host,
            brokers: kafka.brokers,
            positions: kafka.topics.positions,
            queries: worker.queries
        )
        let http = OperationsServer.application(
            configuration: OperationsServer.Configuration(host: serve.host, port: serve.port, devices: true),
            health: worker.health,
            registry: registry,
            devices: DeviceEndpoints.Sources(queries: worker.queries, feed: worker.feed),
            logger: logger,
            onListening: { port in Task { await announce.listening(on: port) } }
        )
        try await WorkerProcess.run(worker: worker, http: http, shutdownTimeout: .seconds(10), logger: logger)
    }

    /// Prints where the page is once the server listens and the worker holds the trace's devices again
    /// (its group join takes seconds), flushed, so that whoever reads the demo's output through a pipe sees it
    /// at once.
    private struct AddressAnnouncement: Sendable {
        let host: String
        let brokers: String
        let positions: String
        let queries: DeviceQueries

        func listening(on port: Int) async {
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if case .json(let bytes) = await queries.ask(.map(.world, limit: 1)),
                    let answer = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                    let inView = answer["inView"] as? Int, inView > 0
                {
                    break
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
            let text = """

                demo: the live map and the device endpoints are at http://\(host):\(port)/ (Ctrl-C stops)
                demo: the worker goes on consuming Kafka at \(brokers): produce more positions there \
                (topic \(positions)) and watch them arrive

                """
            // After what the demo printed before (standard output is buffered when it is not a terminal).
            Swift.print(text, terminator: "")
            fflush(nil)  // every output stream: standard output among them
        }
    }

    /// The bundled trace as records to produce: key = device id, Kafka timestamp = the message's time.
    static func loadTrace() throws -> [ProducerRecord] {
        guard let url = Bundle.module.url(forResource: "demo-trace", withExtension: "jsonl") else {
            throw CommandFailure("geoworker demo: the sample trace (demo-trace.jsonl) is missing from the bundle")
        }
        let text = try String(contentsOf: url, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            guard let entry = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let topic = entry["topic"] as? String, let key = entry["key"] as? String,
                let timestamp = entry["timestamp"] as? Int64, let message = entry["message"]
            else { throw CommandFailure("geoworker demo: bad line in the sample trace: \(line)") }
            return ProducerRecord(
                topic: topic,
                key: Array(key.utf8),
                value: Array(try JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])),
                timestampMilliseconds: timestamp
            )
        }
    }

    /// Every message of a topic, by event time then id.
    private static func readAll(
        topic: String,
        from kafka: DemoKafka,
        logger: Logger
    ) async throws -> [(time: String, value: [UInt8])] {
        var starts: [TopicPartition: StartOffset] = [:]
        for partition in 0..<Int32(partitions) { starts[TopicPartition(topic, partition)] = .beginning }
        let consumer = try Consumer(
            configuration: kafka.consumerConfiguration(groupId: kafka.groupId + "-reader"),
            subscription: .partitions(starts),
            logger: logger
        )
        var events: [(time: String, id: String, value: [UInt8])] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while !consumer.hasReachedEndOfAssignment && ContinuousClock.now < deadline {
            for record in try await consumer.nextBatch() {
                guard let value = record.value else { continue }
                let object = try? JSONSerialization.jsonObject(with: Data(value)) as? [String: Any]
                events.append((object?["time"] as? String ?? "", object?["id"] as? String ?? "", value))
            }
        }
        await consumer.close()
        return events.sorted { ($0.time, $0.id) < ($1.time, $1.id) }.map { ($0.time, $0.value) }
    }
}

extension ProducerRecord {
    /// The same record for another topic.
    fileprivate func onTopic(_ topic: String) -> ProducerRecord {
        var record = self
        record.topic = topic
        return record
    }
}
