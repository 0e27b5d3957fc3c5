import Hummingbird
import HummingbirdTesting
import Kafka
import Logging
import PartitionOffsets
import Prometheus
import TestSupport
import Testing

@testable import Operations
@testable import Worker

/// The operations port in process (Hummingbird's router test framework): what a probe or a scraper gets.
@Suite("Operations endpoints", .timeLimit(.minutes(5)))
struct OperationsServerTests {
    static let logger = Logger.quiet("test.operations")

    func withServer(
        _ health: WorkerHealth,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        _ body: @Sendable @escaping (any TestClientProtocol) async throws -> Void
    ) async throws {
        let app = OperationsServer.application(
            configuration: .init(host: "127.0.0.1", port: 0),
            health: health,
            registry: registry,
            logger: Self.logger
        )
        try await app.test(.router) { client in try await body(client) }
    }

    @Test(
        "/health and /ready answer with the phase, 503 when not alive or not ready",
        arguments: [
            (WorkerHealth.Phase.starting, HTTPResponse.Status.ok, HTTPResponse.Status.serviceUnavailable),
            (.running, .ok, .ok),
            (.stopping, .ok, .serviceUnavailable),
            (.failed, .serviceUnavailable, .serviceUnavailable),
        ]
    )
    func probes(phase: WorkerHealth.Phase, health: HTTPResponse.Status, ready: HTTPResponse.Status) async throws {
        let state = WorkerHealth()
        state.enter(phase)
        try await withServer(state) { client in
            let alive = try await client.execute(uri: "/health", method: .get)
            #expect(alive.status == health)
            #expect(String(buffer: alive.body) == "\(phase)\n")
            let readiness = try await client.execute(uri: "/ready", method: .get)
            #expect(readiness.status == ready)
            #expect(String(buffer: readiness.body) == "\(phase)\n")
            // The same answers as gauges, for alerts: Prometheus scrapes /metrics, not the probes.
            let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
            #expect(metrics.contains("\n\(MetricName.healthy) \(health == .ok ? 1 : 0).0\n"), "\(metrics)")
            #expect(metrics.contains("\n\(MetricName.ready) \(ready == .ok ? 1 : 0).0\n"), "\(metrics)")
        }
    }

    @Test("/metrics shows what the worker counted, its holdings and its lag per partition")
    func metrics() async throws {
        let registry = PrometheusCollectorRegistry()
        let factory = OperationsServer.metricsFactory(registry: registry)
        var metrics = WorkerMetrics(factory: factory)
        var checkpointMetrics = CheckpointMetrics(factory: factory)
        var counters = ProcessingCounters()
        counters.positions = 7
        counters.events["geofence.entered"] = 2
        counters.deadLettered["invalid-json"] = 1
        metrics.publish(counters)
        checkpointMetrics.recordHoldings((devices: 3, pins: 5))
        let partition = TopicPartition("positions", 2)
        checkpointMetrics.recordLag(
            highWatermarks: [partition: 120, TopicPartition("positions", 3): 50],
            applied: [partition: 100]
        )

        try await withServer(WorkerHealth(), registry: registry) { client in
            let response = try await client.execute(uri: "/metrics", method: .get)
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            let text = String(buffer: response.body)
            for line in [
                "geoworker_positions_consumed_total 7",
                #"geoworker_events_produced_total{type="geofence.entered"} 2"#,
                #"geoworker_dead_lettered_total{reason="invalid-json"} 1"#,
                "geoworker_devices 3",
                "geoworker_pins 5",
                #"geoworker_consumer_lag{topic="positions",partition="2"} 20"#,
            ] {
                #expect(text.contains(line), "missing \(line) in:\n\(text)")
            }
            #expect(!text.contains(#"partition="3""#), "no lag before a partition's first checkpoint")
        }
    }
}
