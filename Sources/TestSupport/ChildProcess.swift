import Foundation

/// Runs other programs from tests: the project's own executables (built beside the test bundle) and
/// independent tools such as kcat.
public enum ChildProcess {
    /// What a finished program left.
    public struct Result: Sendable {
        public let status: Int32
        public let output: String
        public let errors: String
    }

    /// The path of an executable product of this package, built in the same directory as the tests.
    public static func builtExecutable(_ name: String) -> String {
        let tests =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: tests).deletingLastPathComponent().appendingPathComponent(name).path
    }

    /// Runs `path` with `arguments` on a thread of its own and waits for it to end without holding a thread of
    /// Swift's concurrency; at most ``slots`` such programs run at once.
    ///
    /// Waiting for a program blocks its thread for as long as the program runs: on one of the few threads Swift's
    /// concurrency shares among every test of the run, tests that wait for programs in parallel would starve the
    /// others (a Kafka group's members would stop polling and miss a rebalance). So the blocking variant is
    /// unavailable from async code. The slots bound the programs instead: checkers started by many parallel tests
    /// at once (Python validators, kcat, geocode runs) would otherwise take the cores from the workers other tests
    /// started, and those would miss their start-up bounds.
    public static func run(
        _ path: String,
        _ arguments: [String],
        input: String? = nil
    ) async throws -> Result {
        await slots.acquire()
        let outcome = await withCheckedContinuation {
            (continuation: CheckedContinuation<Swift.Result<Result, any Error>, Never>) in
            Thread.detachNewThread {
                continuation.resume(returning: Swift.Result { try runBlocking(path, arguments, input: input) })
            }
        }
        await slots.release()
        return try outcome.get()
    }

    /// How many programs ``run(_:_:input:)`` runs at once: one per core.
    static let slots = ProgramSlots(ProcessInfo.processInfo.activeProcessorCount)

    /// Runs `path` with `arguments`, feeding it `input` on standard input, and waits for it to end, blocking the
    /// calling thread.
    @available(*, noasync, message: "blocks a thread Swift's concurrency shares among all tests; use the async run")
    public static func run(_ path: String, _ arguments: [String], input: String? = nil) throws -> Result {
        try runBlocking(path, arguments, input: input)
    }

    private static func runBlocking(_ path: String, _ arguments: [String], input: String?) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Read both pipes before waiting, so a chatty program cannot block on a full pipe.
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: out, errors: err)
    }
}

/// A counting semaphore for async code: ``acquire()`` waits without holding a thread until a slot is free.
actor ProgramSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = max(1, count) }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Hands the slot to the longest waiting caller, or frees it.
    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
