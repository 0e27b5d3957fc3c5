import Foundation

/// A thread of its own that runs submitted jobs one after another: the project's one thread helper.
///
/// librdkafka's polls, commits and closes block, and so do SQLite writes and waits for deliveries. Run on
/// Swift's cooperative pool they would starve every other task of one of its few threads, so the Kafka
/// module's async API hands them to a thread like this, and the worker applies, checkpoints and loops on
/// threads like this.
///
/// The name is what `top -H`, `perf` and `gdb` show: the kernel keeps 15 bytes of it, so name threads that
/// must be told apart within those (`gw-apply-0`, `gw-apply-1`).
public final class DedicatedThread: @unchecked Sendable {
    // `jobs`, `isStopping` and `hasExited` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var isStopping = false
    private var hasExited = false
    private var thread: Thread?
    private let name: String
    private let priority: Priority

    /// How the system schedules a thread against the process's others.
    public enum Priority: Sendable {
        /// As every thread.
        case normal
        /// Behind the normal threads when the cores are busy (a nice value of 10: about a tenth of a normal
        /// thread's share), for work that may wait, so that it does not delay work that must not.
        case background
    }

    public init(name: String, priority: Priority = .normal) {
        self.name = name
        self.priority = priority
        let thread = Thread { [self] in runLoop() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    /// Queues a job.
    ///
    /// Jobs run in the order they were queued.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        precondition(!isStopping, "job submitted to a stopped DedicatedThread")
        jobs.append(job)
        condition.signal()
    }

    /// Runs `body` on this thread and returns its result to the awaiting task.
    public func run<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            execute {
                do throws(Failure) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Runs one blocking call on a short-lived thread of its own and returns its result.
    ///
    /// For rare or long calls (metadata requests, closing a client, a worker's whole loop) that must not wait
    /// behind a thread's queue.
    public static func runOnce<T: Sendable, Failure: Error>(
        name: String,
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let thread = DedicatedThread(name: name)
        defer { thread.stop() }
        return try await thread.run(body)
    }

    /// `name` as the kernel keeps it: its first 15 bytes.
    static func systemName(_ name: String) -> String {
        var short = name
        while short.utf8.count > 15 { short.removeLast() }
        return short
    }

    /// Lets the queued jobs finish, then ends the thread and waits for it to exit.
    public func stop() {
        condition.lock()
        defer { condition.unlock() }
        isStopping = true
        condition.broadcast()
        // A job that stops its own thread cannot wait for itself.
        guard Thread.current != thread else { return }
        while !hasExited { condition.wait() }
    }

    private func runLoop() {
        #if os(Linux)
        // Foundation keeps `Thread.name` to itself on Linux: the kernel's name (what `top -H`, `perf` and
        // `gdb` show) stays the dispatch queue's. Set it here, within the kernel's 15 bytes (through /proc:
        // glibc declares pthread_setname_np only to C code built with _GNU_SOURCE).
        let file = open("/proc/thread-self/comm", O_WRONLY)
        if file >= 0 {
            var systemName = Self.systemName(name)
            _ = systemName.withUTF8 { write(file, $0.baseAddress, $0.count) }
            close(file)
        }
        // Linux keeps a nice value per thread, and `PRIO_PROCESS` with 0 names the calling thread alone.
        if priority == .background { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10) }
        #endif
        while true {
            condition.lock()
            while jobs.isEmpty && !isStopping { condition.wait() }
            if jobs.isEmpty {
                hasExited = true
                thread = nil
                condition.broadcast()
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
