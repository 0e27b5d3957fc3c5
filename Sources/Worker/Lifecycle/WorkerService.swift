public import ServiceLifecycle

/// The ``Worker`` as a swift-service-lifecycle service, with its stop's deadline.
///
/// Graceful shutdown (SIGTERM/SIGINT through the `ServiceGroup`) asks it to stop, and it returns once it has finished
/// the batch in flight, checkpointed and left the group. A stop that has not ended by `stopDeadline` is cancelled: the
/// worker gives up waiting for a checkpoint or a commit, and its run returns within `graceAfterDeadline` with
/// `shutdown` (``Worker/run(graceAfterCancel:)``), the error the service group ends with. Then the live event streams
/// end (``EventFeed/close()``), which would otherwise hold the HTTP server's stop up.
///
/// The deadline is kept here rather than by the group's own timeout: a group past its timeout cancels every service
/// and drops what they throw, so a stop that gave up would look like a clean one.
public struct WorkerService: Service {
    public let worker: Worker
    /// How long a stop may take (`shutdownTimeoutMs`).
    public let stopDeadline: Duration
    /// How long a stop past its deadline still waits for the worker's loop.
    public let graceAfterDeadline: Duration

    public init(worker: Worker, stopDeadline: Duration, graceAfterDeadline: Duration) {
        self.worker = worker
        self.stopDeadline = stopDeadline
        self.graceAfterDeadline = graceAfterDeadline
    }

    public func run() async throws {
        defer { worker.feed.close() }
        try await withThrowingTaskGroup(of: Void.self) { [worker, stopDeadline, graceAfterDeadline] group in
            group.addTask { try await worker.run(graceAfterCancel: graceAfterDeadline) }
            group.addTask {
                // Ends at the stop's deadline, or when the worker's run ended on its own (this is cancelled then).
                do { try await gracefulShutdown() } catch { return }
                worker.stop()
                try? await Task.sleep(for: stopDeadline)
            }
            // The first to end: the worker's run, or the deadline, which cancels the run.
            try await group.next()
            group.cancelAll()
            while try await group.next() != nil {}
        }
    }
}
