import Foundation

/// A program started by a test that runs while the test goes on: to be signalled (SIGTERM, SIGKILL) and waited for.
///
/// Its standard error goes to a file (no pipe to fill up and block it).
public final class BackgroundProcess: @unchecked Sendable {
    // @unchecked: `Process` is a class Foundation does not mark Sendable; this wrapper only reads its state
    // and sends it signals, both safe from any thread.
    private let process = Process()
    private let errorsFile: URL
    private let outputFile: URL?

    /// Starts `path` with `arguments`, with `environment` added to this process's environment.
    ///
    /// - Parameters:
    ///   - path: the executable.
    ///   - arguments: its arguments.
    ///   - environment: variables added to this process's environment.
    ///   - keepOutput: whether to keep standard output (``output``); discarded otherwise.
    ///   - directory: its working directory; this process's when nil.
    /// - Throws: when the process cannot be started.
    public init(
        _ path: String,
        _ arguments: [String],
        environment: [String: String] = [:],
        keepOutput: Bool = false,
        in directory: String? = nil
    ) throws {
        errorsFile = try Self.makeFile("child-\(UUID()).log")
        outputFile = keepOutput ? try Self.makeFile("child-\(UUID()).out") : nil
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try outputFile.map { try FileHandle(forWritingTo: $0) } ?? FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errorsFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    private static func makeFile(_ name: String) throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
        return file
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: errorsFile)
        if let outputFile { try? FileManager.default.removeItem(at: outputFile) }
    }

    public var isRunning: Bool { process.isRunning }

    /// The program's process id.
    public var processIdentifier: Int32 { process.processIdentifier }

    /// Sends `signal` (SIGTERM, SIGKILL, ...) if the program still runs.
    public func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits up to `timeout` for the program to end; returns how it ended, or nil if it still runs.
    public func waitForExit(timeout: Duration) async -> Ending? {
        var budget = WaitBudget(timeout, lookingEvery: .milliseconds(20))
        while process.isRunning && budget.allowsAnotherLook() {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard !process.isRunning else { return nil }
        return ending
    }

    private var ending: Ending {
        process.terminationReason == .exit
            ? .exited(process.terminationStatus) : .signalled(process.terminationStatus)
    }

    /// Blocks until the program ends; for synchronous callers (a benchmark's main thread), never async code.
    @available(*, noasync, message: "blocks the calling thread; use waitForExit(timeout:)")
    public func waitUntilExit() -> Ending {
        process.waitUntilExit()
        return ending
    }

    /// Waits up to `timeout` for the program to end, then kills it and waits up to 5 s more; returns how it ended, or
    /// nil when Foundation never saw it end.
    ///
    /// For a `deinit`, which cannot suspend: it blocks the calling thread, but never longer than that. Foundation's own
    /// `waitUntilExit` is not used: on Linux it can wait forever for an ending it missed (a test's deinit hung for
    /// ten minutes on a Nominatim that had died at its start).
    @discardableResult
    public func waitUntilExitOrKill(after timeout: Duration) -> Ending? {
        let clock = ContinuousClock()
        var deadline = clock.now + timeout
        while process.isRunning && clock.now < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            deadline = clock.now + .seconds(5)
            while process.isRunning && clock.now < deadline { usleep(20_000) }
        }
        return process.isRunning ? nil : ending
    }

    /// What the program wrote to standard output so far (empty unless started with `keepOutput`).
    public var output: String {
        outputFile.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
    }

    /// What the program wrote to standard error so far.
    public var errors: String {
        (try? String(contentsOf: errorsFile, encoding: .utf8)) ?? ""
    }

    public enum Ending: Hashable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }
}
