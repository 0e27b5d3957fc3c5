import Foundation

/// A real Nominatim's API (`scripts/nominatim.sh serve`: OpenStreetMap's geocoder over Monaco's extract, imported once
/// by `scripts/setup.sh test` and kept in `.build-nominatim/`), in a process of its own on a free port.
///
/// Its access log says what it was asked: ``reverseRequests`` counts the requests that reached it. ``stop()`` ends the
/// API (the database stays up for the next one); ``start()`` starts it again on the same port.
public final class NominatimServer: @unchecked Sendable {
    // @unchecked: `process` is replaced only by start() and stop(), which a test calls from one task.

    /// The base URL, for `address.provider`.
    public let baseURL: String
    public let port: Int
    private var process: BackgroundProcess?
    /// The access logs of the API's earlier runs on this port.
    private var earlierLogs = ""

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/nominatim.sh").path

    /// Starts the API and waits until it answers.
    ///
    /// - Throws: ``NominatimServerError`` when it does not start within `timeout` (not set up: run
    ///   `scripts/nominatim.sh setup`, which `make test` does).
    public init(timeout: Duration = .seconds(60)) async throws {
        port = try freeLocalPort()
        baseURL = "http://127.0.0.1:\(port)"
        try await start(timeout: timeout)
    }

    deinit {
        process?.send(SIGTERM)
        process?.waitUntilExitOrKill(after: .seconds(5))
    }

    /// Starts the API again after ``stop()``.
    public func start(timeout: Duration = .seconds(60)) async throws {
        let process = try BackgroundProcess("/bin/bash", [Self.script, "serve", "\(port)"], keepOutput: true)
        self.process = process
        let deadline = ContinuousClock.now + timeout
        while !process.errors.contains("Uvicorn running on") {
            guard process.isRunning, ContinuousClock.now < deadline else {
                throw NominatimServerError(description: "Nominatim did not start on port \(port): \(log.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Stops the API: asks get their connections refused until ``start()``.
    public func stop() {
        guard let process else { return }
        process.send(SIGTERM)
        process.waitUntilExitOrKill(after: .seconds(10))
        earlierLogs += process.errors + process.output
        self.process = nil
    }

    /// Everything the API printed (its access log included), over all its runs.
    public var log: String { earlierLogs + (process.map { $0.errors + $0.output } ?? "") }

    /// How many `/reverse` requests reached the API, over all its runs.
    public var reverseRequests: Int {
        log.split(separator: "\n").count { $0.contains("\"GET /") && $0.contains("/reverse?") }
    }
}

public struct NominatimServerError: Error, CustomStringConvertible {
    public let description: String
}
