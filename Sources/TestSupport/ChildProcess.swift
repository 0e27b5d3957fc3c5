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
        // Each pipe drained on a thread of its own while the input is written, so that a program writing much to
        // one of them before reading its input, or before closing the other, never waits on a full pipe.
        let out = PipeDrain(output.fileHandleForReading)
        let err = PipeDrain(errors.fileHandleForReading)
        if let input { writeAll(Array(input.utf8), to: stdin.fileHandleForWriting.fileDescriptor) }
        try stdin.fileHandleForWriting.close()
        let outputBytes = out.bytes()
        let errorBytes = err.bytes()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus,
            output: String(decoding: outputBytes, as: UTF8.self),
            errors: String(decoding: errorBytes, as: UTF8.self)
        )
    }

    /// Writes `bytes` to `descriptor`, going on after a signal interrupts a write; stops at any other error (the
    /// program closed its input: what it did not read is its own business, its status and output tell).
    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                written += count
            } else if count < 0 && errno == EINTR {
                continue
            } else {
                return
            }
        }
    }
}

/// Reads a pipe to its end on a thread of its own.
///
/// With `read(2)` and a retry when a signal interrupts it: Foundation's `readDataToEndOfFile` traps on `EINTR`, which
/// the mock cluster's threads and children ending around a test raise now and then.
final class PipeDrain: @unchecked Sendable {
    // @unchecked: `collected` is written by the draining thread only, and read after `done` says it finished.
    private var collected: [UInt8] = []
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        let descriptor = handle.fileDescriptor
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    collected += buffer[0..<count]
                } else if count < 0 && errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            done.signal()
        }
    }

    /// Everything the pipe carried, once its writer closed it.
    func bytes() -> [UInt8] {
        done.wait()
        return collected
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
