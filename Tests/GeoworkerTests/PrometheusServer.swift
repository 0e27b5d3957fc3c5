import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real Prometheus (Debian's `prometheus` package) scraping one worker's `/metrics` every second and
/// evaluating rule files as often, with its storage in a temporary directory: what an operator's Prometheus does,
/// quicker.
final class PrometheusServer: @unchecked Sendable {
    // @unchecked: its values are set in init and never change.
    private let process: BackgroundProcess
    private let directory: URL
    private let base: URL

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts Prometheus on a free port and waits until it answers.
    ///
    /// - Parameters:
    ///   - target: the worker's operations port on 127.0.0.1, scraped as job `geoworker`.
    ///   - ruleFiles: rule files to evaluate.
    /// - Throws: ``Failure`` when Prometheus does not start within 30 s.
    init(scraping target: Int, ruleFiles: [URL]) async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prometheus-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let rules = ruleFiles.map { "  - \($0.path)" }.joined(separator: "\n")
        let configuration = """
            global:
              scrape_interval: 1s
              evaluation_interval: 1s
            rule_files:
            \(rules)
            scrape_configs:
              - job_name: geoworker
                static_configs:
                  - targets: ["127.0.0.1:\(target)"]
            """
        let file = directory.appendingPathComponent("prometheus.yml")
        try configuration.write(to: file, atomically: true, encoding: .utf8)
        let port = try freeLocalPort()
        base = URL(string: "http://127.0.0.1:\(port)/api/v1/")!
        process = try BackgroundProcess(
            "/usr/bin/env",
            [
                "prometheus", "--config.file=\(file.path)", "--web.listen-address=127.0.0.1:\(port)",
                "--storage.tsdb.path=\(directory.appendingPathComponent("data").path)", "--log.level=warn",
            ]
        )
        var budget = WaitBudget(.seconds(30), lookingEvery: .milliseconds(200))
        while (try? await api("status/buildinfo")) == nil {
            guard budget.allowsAnotherLook(), process.isRunning else {
                throw Failure(description: "prometheus did not start: \(process.errors.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    deinit {
        process.send(SIGTERM)
        _ = process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Prometheus' log, for a failing test's message.
    var log: String { process.errors }

    /// GETs `path` of the HTTP API (`query?query=...`) and returns its `data`.
    func api(_ path: String) async throws -> Any {
        let (body, response) = try await URLSession.shared.data(from: URL(string: path, relativeTo: base)!)
        let object = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        guard (response as? HTTPURLResponse)?.statusCode == 200, object?["status"] as? String == "success",
            let data = object?["data"]
        else {
            throw Failure(description: "\(path): \(String(decoding: body, as: UTF8.self).prefix(500))")
        }
        return data
    }

    /// An instant query's samples: each series' labels (with `__name__`) and value.
    func query(_ expression: String) async throws -> [(labels: [String: String], value: Double)] {
        let encoded = expression.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? expression
        let data = try await api("query?query=\(encoded)") as? [String: Any]
        let results = data?["result"] as? [[String: Any]] ?? []
        return results.map { result in
            let value = (result["value"] as? [Any])?.last as? String
            return (result["metric"] as? [String: String] ?? [:], value.flatMap(Double.init) ?? .nan)
        }
    }

    /// Every metric name Prometheus holds samples of.
    func metricNames() async throws -> [String] {
        try await api("label/__name__/values") as? [String] ?? []
    }

    /// Each rule of the loaded groups: its name, health (`ok`, `err`, `unknown`) and last error.
    func rules() async throws -> [(name: String, health: String, lastError: String)] {
        let data = try await api("rules") as? [String: Any]
        let groups = data?["groups"] as? [[String: Any]] ?? []
        return groups.flatMap { group in
            (group["rules"] as? [[String: Any]] ?? []).map { rule in
                (
                    rule["name"] as? String ?? "",
                    rule["health"] as? String ?? "",
                    rule["lastError"] as? String ?? ""
                )
            }
        }
    }
}
