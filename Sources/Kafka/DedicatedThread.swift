import Foundation

/// A thread of its own that runs submitted jobs one after another.
///
/// librdkafka's polls, commits and closes block. Run on Swift's cooperative pool they would starve every
/// other task of one of its few threads, so the async API of this module hands them to a thread like this.
final class DedicatedThread: @unchecked Sendable {
    // `jobs`, `isStopping` and `hasExited` are guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var isStopping = false
    private var hasExited = false
    private var thread: Thread?

    init(name: String) {
        let thread = Thread { [self] in runLoop() }
        thread.name = name
        self.thread = thread
        thread.start()
    }

    /// Queues a job. Jobs run in the order they were queued.
    func execute(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        defer { condition.unlock() }
        precondition(!isStopping, "job submitted to a stopped DedicatedThread")
        jobs.append(job)
        condition.signal()
    }

    /// Runs `body` on this thread and returns its result to the awaiting task.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws(KafkaError) -> T) async throws(KafkaError) -> T {
        let result: Result<T, KafkaError> = await withCheckedContinuation { continuation in
            execute {
                do throws(KafkaError) {
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
    /// For rare calls (metadata requests, closing a client) that must not wait behind a thread's queue.
    static func runOnce<T: Sendable>(
        name: String,
        _ body: @escaping @Sendable () throws(KafkaError) -> T
    ) async throws(KafkaError) -> T {
        let thread = DedicatedThread(name: name)
        defer { thread.stop() }
        return try await thread.run(body)
    }

    /// Lets the queued jobs finish, then ends the thread and waits for it to exit.
    func stop() {
        condition.lock()
        defer { condition.unlock() }
        isStopping = true
        condition.broadcast()
        // A job that stops its own thread cannot wait for itself.
        guard Thread.current != thread else { return }
        while !hasExited { condition.wait() }
    }

    private func runLoop() {
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
