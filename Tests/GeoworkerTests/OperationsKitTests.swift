import Foundation
import Kafka
import TestSupport
import Testing
import Worker

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The operations kit an adopting team wires in, checked against the running service.
///
/// The Prometheus rules and their unit tests (promtool), the Grafana dashboard, the deploy files
/// (kubernetes-validate, the Compose specification's schema, hadolint, docs/deploying.md's image table), and a real
/// Prometheus against a running worker, so that none of it drifts from the service. Each check is also seen
/// refusing a copy broken on purpose.
@Suite("The operations kit: alerts, dashboard and deploy files", .serialized, .timeLimit(.minutes(10)))
struct OperationsKitTests {
    static let root = ServiceTestBed.repositoryRoot
    static let rules = root.appendingPathComponent("deploy/prometheus/geoworker.rules.yml")
    static let dashboard = root.appendingPathComponent("deploy/grafana/geoworker.json")

    @Test("promtool accepts the configuration and the rules, its unit tests pass, every alert has a runbook section")
    func rulesAndTheirTests() async throws {
        let directory = Self.root.appendingPathComponent("deploy/prometheus")
        let config = try await promtool(["check", "config", directory.appendingPathComponent("prometheus.yml").path])
        #expect(config.status == 0, "\(config.output)\(config.errors)")
        let unitTests = try await promtool([
            "test", "rules", directory.appendingPathComponent("geoworker.rules.test.yml").path,
        ])
        #expect(unitTests.status == 0, "\(unitTests.output)\(unitTests.errors)")
        let kit = try await checkKit(rulesArguments(in: Self.root))
        #expect(kit.status == 0 && kit.output.contains("checked 12 alerts"), "\(kit.output)\(kit.errors)")
    }

    @Test(
        "a broken copy of the rules is refused: a metric renamed, a runbook link to no section, bad PromQL, an untested alert",
        arguments: [
            ("geoworker_healthy == 0", "geoworker_health == 0", "promtool test", "GeoworkerUnhealthy"),
            (
                "operations.md#geoworkernotready", "operations.md#geoworker-not-ready", "kit",
                "is no heading of operations.md"
            ),
            ("expr: geoworker_ready == 0", "expr: geoworker_ready == ", "promtool check", "could not parse expression"),
            (
                "alert: GeoworkerNotReady", "alert: GeoworkerNotConsuming", "kit",
                "no test makes GeoworkerNotConsuming fire"
            ),
        ]
    )
    func brokenRules(original: String, broken: String, checker: String, complaint: String) async throws {
        let copy = try copyOfRepository(["deploy", "docs"])
        defer { try? FileManager.default.removeItem(at: copy) }
        try replace(original, with: broken, in: copy.appendingPathComponent("deploy/prometheus/geoworker.rules.yml"))
        let directory = copy.appendingPathComponent("deploy/prometheus")
        let result =
            switch checker {
            case "promtool test":
                try await promtool(["test", "rules", directory.appendingPathComponent("geoworker.rules.test.yml").path])
            case "promtool check":
                try await promtool(["check", "rules", directory.appendingPathComponent("geoworker.rules.yml").path])
            default:
                try await checkKit(rulesArguments(in: copy))
            }
        #expect(result.status != 0, "\(result.output)")
        #expect((result.output + result.errors).contains(complaint), "\(result.output)\(result.errors)")
    }

    @Test("the dashboard's panels and queries are well formed; a broken copy is refused")
    func dashboardPanels() async throws {
        let result = try await checkKit(["dashboard", Self.dashboard.path])
        #expect(result.status == 0 && result.output.contains("0 problems"), "\(result.output)\(result.errors)")
        for (original, broken, complaint) in [
            (#""uid": "${datasource}""#, #""uid": "prometheus""#, "datasource is not"),
            (#""w": 12"#, #""w": 30"#, "not inside the 24 columns"),
            ("[$__rate_interval]))", "[$__rate_interval])", "not well formed"),
        ] {
            let copy = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-\(UUID()).json")
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.copyItem(at: Self.dashboard, to: copy)
            try replace(original, with: broken, in: copy, once: true)
            let refused = try await checkKit(["dashboard", copy.path])
            #expect(refused.status == 1 && refused.output.contains(complaint), "\(broken): \(refused.output)")
        }
    }

    @Test("the manifests, the compose file and the Dockerfile pass their validators and agree with docs/deploying.md")
    func deployFiles() async throws {
        let result = try await checkKit(["deploy", Self.root.path])
        #expect(result.status == 0 && result.output.contains("0 problems"), "\(result.output)\(result.errors)")
    }

    @Test(
        "a broken deploy file is refused",
        arguments: [
            ("deploy/k8s/statefulset.yaml", "serviceName: geoworker", "serviceNam: geoworker", "kubernetes-validate"),
            ("deploy/k8s/service.yaml", "port: 8080", "port: eighty", "kubernetes-validate"),
            ("deploy/compose.yaml", "stop_grace_period: 40s", "stop_grace_periods: 40s", "compose.yaml"),
            ("deploy/Dockerfile", "USER 10001", "USER root", "the image runs as USER root"),
            (
                "deploy/Dockerfile", "VOLUME /var/lib/geoworker", "VOLUME /data",
                "the state volume is /var/lib/geoworker"
            ),
            ("deploy/Dockerfile", #""probe", "health""#, #""probe", "ready""#, "HEALTHCHECK"),
            ("docs/deploying.md", "| port | `8080`", "| port | `9090`", "EXPOSE"),
        ]
    )
    func brokenDeployFiles(file: String, original: String, broken: String, complaint: String) async throws {
        let copy = try copyOfRepository(["deploy", "docs"])
        defer { try? FileManager.default.removeItem(at: copy) }
        try replace(original, with: broken, in: copy.appendingPathComponent(file))
        let result = try await checkKit(["deploy", copy.path])
        #expect(result.status == 1, "\(result.output)\(result.errors)")
        #expect(result.output.contains(complaint), "\(result.output)")
    }

    @Test(
        "a real Prometheus scrapes a running worker and evaluates the rules; every metric the rules and the dashboard query is one it scraped"
    )
    func prometheusAgainstTheWorker() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 10, positionsPerDevice: 30, topics: bed.topics)
        let positions = traffic.positions()
        let invalid = ProducerRecord(topic: bed.topics.positions, key: Array("device-0".utf8), value: Array("{".utf8))
        try await bed.produce(traffic.commands() + positions.prefix(150) + [invalid])
        // A refused delivery, so that the refusals' counter has a series as it would in production.
        bed.cluster.refuseNext(2, .produce, with: .topicAuthorizationFailed)
        let child = try bed.start()
        let port = try await listeningPort(of: child)
        try await waitUntil("the refusal recovered from and the first half consumed", timeout: .seconds(90)) {
            let metrics = try await get(port, "metrics").body
            let healthy = try await get(port, "health").status == 200
            // A rewind's replays count again: at least the first half.
            return
                (counter("geoworker_positions_consumed_total", in: metrics) >= 150
                && metrics.contains("geoworker_delivery_failures_total{") && healthy) || !child.isRunning
        }
        #expect(child.isRunning, "\(child.errors.suffix(2000))")

        // The container's health check, against the real thing.
        let probe = try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["probe", "ready", "--port", "\(port)"]
        )
        #expect(probe.status == 0 && probe.output.hasPrefix("/ready: 200 running"), "\(probe.output)\(probe.errors)")

        let prometheus = try await PrometheusServer(scraping: port, ruleFiles: [Self.rules])
        try await waitUntil("Prometheus scraped the worker") {
            try await prometheus.query(#"up{job="geoworker"}"#).first?.value == 1
        }
        // Input while Prometheus watches, so that the recorded rate has something to show.
        let consumed = counter("geoworker_positions_consumed_total", in: try await get(port, "metrics").body)
        try await bed.produce(Array(positions.suffix(150)))
        try await waitUntil("the second half consumed") {
            counter("geoworker_positions_consumed_total", in: try await get(port, "metrics").body) >= consumed
                + 150
        }
        var rate: Double = 0
        try await waitUntil("the recording rule's rate of positions is above zero") {
            rate = try await prometheus.query("geoworker:positions_consumed:rate5m").first?.value ?? 0
            return rate > 0
        }
        #expect(rate > 0, "\(prometheus.log.suffix(2000))")
        let lag = try await prometheus.query("geoworker:consumer_lag:sum")
        #expect(Set(lag.compactMap { $0.labels["topic"] }) == [bed.topics.positions, bed.topics.commands])
        // The gauge has a series once the first checkpoint is stored (a refusal's rewind may put it after the input
        // was consumed), and the rule's value follows at its next evaluation.
        try await waitUntil("the recorded checkpoint age says the store is up to date", timeout: .seconds(90)) {
            let age = try await prometheus.query("geoworker:checkpoint_age_seconds").first?.value ?? .infinity
            return age >= 0 && age < 60
        }
        let rules = try await prometheus.rules()
        #expect(rules.count == 18)
        for rule in rules { #expect(rule.health == "ok", "\(rule.name): \(rule.health) \(rule.lastError)") }

        // Every metric the rules and the dashboard query, against what Prometheus scraped from the worker.
        let names = FileManager.default.temporaryDirectory.appendingPathComponent("scraped-\(UUID()).txt")
        defer { try? FileManager.default.removeItem(at: names) }
        try (try await prometheus.metricNames()).joined(separator: "\n").write(
            to: names,
            atomically: true,
            encoding: .utf8
        )
        let kit = try await checkKit(["metrics", names.path, Self.rules.path, Self.dashboard.path])
        #expect(kit.status == 0 && kit.output.contains("0 problems"), "\(kit.output)\(kit.errors)")
        // And the other way: every metric of the worker's is documented.
        let documented = try String(
            contentsOf: Self.root.appendingPathComponent("docs/metrics.md"),
            encoding: .utf8
        )
        for name in try await prometheus.metricNames() where name.hasPrefix("geoworker_") {
            let family = name.replacing(/_(bucket|sum|count)$/, with: "")
            #expect(
                documented.contains("`\(family)`") || documented.contains("`\(family){"),
                "\(family) in docs/metrics.md"
            )
        }

        // A metric renamed in a rule or in a panel is one the worker does not expose.
        for (file, original, renamed) in [
            (Self.rules, "geoworker_healthy == 0", "geoworker_health == 0"),
            (Self.dashboard, "geoworker_checkpoint_duration_seconds_bucket", "geoworker_checkpoint_seconds_bucket"),
        ] {
            let copy = FileManager.default.temporaryDirectory.appendingPathComponent(
                "\(UUID())-\(file.lastPathComponent)"
            )
            defer { try? FileManager.default.removeItem(at: copy) }
            try FileManager.default.copyItem(at: file, to: copy)
            try replace(original, with: renamed, in: copy)
            let others = file == Self.rules ? [Self.dashboard] : [Self.rules]
            let refused = try await checkKit(["metrics", names.path, copy.path] + others.map(\.path))
            let name = renamed.split(separator: " ")[0]
            #expect(refused.status == 1 && refused.output.contains("\(name) is not a metric"), "\(refused.output)")
        }

        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(30)) == .exited(0))
        let stopped = try await ChildProcess.run(
            ChildProcess.builtExecutable("geoworker"),
            ["probe", "--port", "\(port)"]
        )
        #expect(stopped.status == 1 && stopped.output.contains("/health: no answer: connecting to 127.0.0.1"))
    }

    // MARK: Helpers

    private func promtool(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run("/usr/bin/env", ["promtool"] + arguments)
    }

    private func checkKit(_ arguments: [String]) async throws -> ChildProcess.Result {
        try await ChildProcess.run(
            "/usr/bin/env",
            ["python3", Self.root.appendingPathComponent("tools/ops/check_ops_kit.py").path] + arguments
        )
    }

    private func rulesArguments(in root: URL) -> [String] {
        [
            "rules", root.appendingPathComponent("deploy/prometheus/geoworker.rules.yml").path,
            root.appendingPathComponent("deploy/prometheus/geoworker.rules.test.yml").path,
            root.appendingPathComponent("docs/operations.md").path,
        ]
    }

    /// A temporary directory with copies of the repository's `items` (files or directories).
    private func copyOfRepository(_ items: [String]) throws -> URL {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("repository-\(UUID())")
        try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
        for item in items {
            try FileManager.default.copyItem(
                at: Self.root.appendingPathComponent(item),
                to: copy.appendingPathComponent(item)
            )
        }
        return copy
    }

    /// Replaces `original` (which must be there) with `broken` in `file`: everywhere, or its first occurrence.
    private func replace(_ original: String, with broken: String, in file: URL, once: Bool = false) throws {
        let text = try String(contentsOf: file, encoding: .utf8)
        let range = try #require(text.range(of: original), "\(original) is not in \(file.lastPathComponent)")
        let changed =
            once
            ? text.replacingCharacters(in: range, with: broken)
            : text.replacingOccurrences(of: original, with: broken)
        try changed.write(to: file, atomically: true, encoding: .utf8)
    }
}
