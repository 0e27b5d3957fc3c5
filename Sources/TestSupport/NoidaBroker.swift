import Foundation
import Kafka
import Logging

/// noida-db, an independent Kafka-protocol broker (PyPI `noida-db`, pinned and installed by `scripts/setup.sh test`),
/// in a process of its own: on a free port, with a data directory of its own, stopped by its pid.
///
/// The tests' real broker beside librdkafka's mock cluster: it writes transaction markers, answers CreateTopics and
/// compacts, as Apache Kafka does. Its process is the binary itself, started in the package's folder (the package's
/// console script is a Python wrapper whose child would outlive a SIGTERM).
///
/// Its output and data are kept when it ended before its test did (a crash); ``log`` gives them to failure messages.
public final class NoidaBroker: @unchecked Sendable {
    // @unchecked: the process wrapper is safe from any thread; the rest is set once in `init`.

    /// `host:port`, for `bootstrap.servers`.
    public let bootstrapServers: String
    /// Where the broker keeps its data and its log.
    public let dataDirectory: String
    private let binary: String
    private let process: BackgroundProcess
    /// Set by ``stop()``: the broker ended because it was asked to.
    private var stopped = false
    private static let logger = Logger.quiet("test.noida-db")

    /// Starts a broker and waits until it answers a metadata request.
    ///
    /// - Throws: ``NoidaBrokerError`` when noida-db is not installed, or does not start within `timeout`.
    public init(timeout: Duration = .seconds(30)) async throws {
        binary = try await Self.installedBinary()
        let port = try freeLocalPort()
        bootstrapServers = "127.0.0.1:\(port)"
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("noida-db-\(UUID())").path
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        process = try BackgroundProcess(
            binary,
            ["start", "--only", "kafka", "--kafka-port", "\(port)", "--data-dir", dataDirectory],
            keepOutput: true,
            in: URL(fileURLWithPath: binary).deletingLastPathComponent().path
        )
        try await waitUntilAnswering(timeout: timeout)
    }

    deinit {
        guard !stopped else { return }
        // A broker that ended before it was asked to crashed: its output and data stay for whoever reads the failure.
        if !process.isRunning {
            try? (process.output + process.errors).write(
                toFile: dataDirectory + "/broker-output.log",
                atomically: true,
                encoding: .utf8
            )
            print("noida-db at \(bootstrapServers) ended before its test did; its output and data: \(dataDirectory)")
            return
        }
        // Its data is the test's alone: no need to wait for a graceful stop (which may write a snapshot first).
        process.send(SIGTERM)
        process.waitUntilExitOrKill(after: .seconds(2))
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// Stops the broker and removes its data now, as letting it go does: for a holder that never lets it go (a
    /// program's global, which outlives `exit`).
    public func stop() {
        stopped = true
        process.send(SIGTERM)
        process.waitUntilExitOrKill(after: .seconds(2))
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// The broker's own log and what its process printed, for a failing test's message.
    public var log: String {
        let file = (try? String(contentsOfFile: dataDirectory + "/noida.log", encoding: .utf8)) ?? ""
        return file + process.output + process.errors
    }

    /// Creates `topic` through the Admin API (CreateTopics), as an operator's tool would; an existing topic is kept.
    ///
    /// - Parameters:
    ///   - topic: its name.
    ///   - partitions: how many partitions it gets.
    ///   - configuration: topic-level settings (`cleanup.policy`, `segment.ms`...); `retention.ms` is -1 unless given
    ///     (``keptWhateverTheirAge``).
    /// - Throws: `KafkaError` with the broker's reason.
    public func createTopic(_ topic: String, partitions: Int, configuration: [String: String] = [:]) throws {
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: bootstrapServers),
            logger: Self.logger
        )
        defer { producer.close(timeout: .zero) }
        try producer.createTopic(
            topic,
            partitions: partitions,
            configuration: Self.keptWhateverTheirAge.merging(configuration) { $1 }
        )
    }

    /// The suite's traffic carries fixed times (its events' content depends on them), and a broker's default time
    /// retention (7 days) deletes records stamped longer ago in the background: a topic of the suite keeps them.
    public static let keptWhateverTheirAge = ["retention.ms": "-1"]

    /// The settings of `topic` as the broker reports them (DescribeConfigs).
    public func topicConfiguration(_ topic: String) async throws -> [String: String] {
        let producer = try Producer(
            configuration: ProducerConfiguration(bootstrapServers: bootstrapServers),
            logger: Self.logger
        )
        do {
            let settings = try await producer.topicConfiguration(topic)
            await producer.close(timeout: .zero)
            return settings
        } catch {
            await producer.close(timeout: .zero)
            throw error
        }
    }

    /// Stops the broker's Kafka service, keeping its data (`noida-db stop kafka`): clients meet a broker that is down.
    public func stopKafka() async throws {
        try await control(["stop", "kafka"])
    }

    /// Starts the Kafka service again on the same port and data (`noida-db start kafka`).
    public func startKafka() async throws {
        try await control(["start", "kafka"])
        try await waitUntilAnswering(timeout: .seconds(30))
    }

    private func control(_ command: [String]) async throws {
        let result = try await ChildProcess.run(binary, command + ["--data-dir", dataDirectory])
        guard result.status == 0 else {
            throw NoidaBrokerError("noida-db \(command.joined(separator: " ")) failed: \(result.errors)")
        }
    }

    /// Waits until a metadata request is answered (the port may take connections before the service answers).
    private func waitUntilAnswering(timeout: Duration) async throws {
        var budget = WaitBudget(timeout, lookingEvery: .milliseconds(100))
        while budget.allowsAnotherLook() {
            guard process.isRunning else {
                throw NoidaBrokerError("noida-db ended at start-up: \(log.suffix(2000))")
            }
            let metadata = try? await ChildProcess.run("/usr/bin/kcat", ["-b", bootstrapServers, "-L", "-m", "1"])
            if metadata?.status == 0 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw NoidaBrokerError("noida-db did not answer at \(bootstrapServers) within \(timeout): \(log.suffix(2000))")
    }

    /// The pinned package's binary: `GEOWORKER_NOIDA_DB` when set, else the one in the installed package's folder.
    static func installedBinary() async throws -> String {
        if let path = ProcessInfo.processInfo.environment["GEOWORKER_NOIDA_DB"] { return path }
        let found = try? await ChildProcess.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import noida_db, os; print(os.path.join(os.path.dirname(noida_db.__file__), 'noida-db'))",
            ]
        )
        let path = found?.output.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        guard found?.status == 0, FileManager.default.isExecutableFile(atPath: path) else {
            throw NoidaBrokerError(
                "noida-db is not installed: `scripts/setup.sh test` (which `make test` runs) installs it from PyPI"
            )
        }
        return path
    }
}

/// noida-db could not be found, started or controlled; the message says which and shows its log.
public struct NoidaBrokerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
