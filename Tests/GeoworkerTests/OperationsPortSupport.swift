import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The operations port as the service tests reach it: its port from the log, plain GETs, waiting for a state.

func listeningPort(of child: BackgroundProcess) async throws -> Int {
    var port: Int?
    try await waitUntil("the HTTP endpoints listen") {
        // StreamLogHandler puts the metadata before the message: "... port=NNNN [Worker] HTTP endpoints listening".
        port = child.errors.firstMatch(of: /port=(\d+) \[\w+\] HTTP endpoints listening/).flatMap {
            Int($0.1)
        }
        return port != nil || !child.isRunning
    }
    return try #require(port, "\(child.errors.suffix(2000))")
}

struct HTTPAnswer {
    let status: Int
    let contentType: String?
    let body: String
    /// The `Retry-After` header, when the answer has one.
    var retryAfter: String? = nil
}

func get(_ port: Int, _ path: String, headers: [String: String] = [:]) async throws -> HTTPAnswer {
    let url = try #require(URL(string: "http://127.0.0.1:\(port)/\(path)"))
    var request = URLRequest(url: url)
    for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = try #require(response as? HTTPURLResponse)
    return HTTPAnswer(
        status: http.statusCode,
        contentType: http.value(forHTTPHeaderField: "Content-Type"),
        body: String(decoding: data, as: UTF8.self),
        retryAfter: http.value(forHTTPHeaderField: "Retry-After")
    )
}

func waitUntil(
    _ what: String,
    timeout: Duration = .seconds(60),
    _ condition: () async throws -> Bool
)
    async throws
{
    var budget = WaitBudget(timeout, lookingEvery: .milliseconds(50))
    while budget.allowsAnotherLook() {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("timed out waiting until \(what)")
}

/// A gauge's value in a Prometheus text page (a gauge may be fractional); nil when the page has none.
func gauge(_ name: String, in metrics: String) -> Double? {
    metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ")[1]) }
}

/// When the worker on `port` last had everything it applied written (its checkpoint gauge, seconds since the epoch).
func checkpointUpToDate(_ port: Int) async throws -> Double? {
    gauge("geoworker_checkpoint_up_to_date_timestamp_seconds", in: try await get(port, "metrics").body)
}

/// The value of an unlabelled counter in a /metrics text, 0 when it is not there.
func counter(_ name: String, in metrics: String) -> Int {
    metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
}

/// Waits until the worker on `port` has consumed `positions` positions (its metrics say so).
func waitUntilConsumed(_ port: Int, positions: Int, timeout: Duration = .seconds(60)) async throws {
    try await waitUntil("every position consumed", timeout: timeout) {
        try await get(port, "metrics").body.contains("geoworker_positions_consumed_total \(positions)\n")
    }
}

/// Starts `geoworker run` on the bed with `extra` and waits until it has consumed `positions` positions;
/// returns it and its operations port.
func startServing(
    _ bed: ServiceTestBed,
    _ extra: [String],
    environment: [String: String] = [:],
    untilConsumed positions: Int
) async throws -> (child: BackgroundProcess, port: Int) {
    let child = try bed.start(extra, environment: environment)
    let port = try await listeningPort(of: child)
    try await waitUntilConsumed(port, positions: positions)
    return (child, port)
}
