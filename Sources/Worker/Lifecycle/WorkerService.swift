public import ServiceLifecycle

/// The ``Worker`` as a swift-service-lifecycle service: graceful shutdown (SIGTERM/SIGINT through the `ServiceGroup`)
/// and cancellation both ask it to stop, and it returns once it has finished the batch in flight, checkpointed and left
/// the group; then it ends the live event streams (``EventFeed/finish()``), which would otherwise hold the HTTP
/// server's stop up.
///
/// The worker's loop runs on a thread of its own.
public struct WorkerService: Service {
    public let worker: Worker

    public init(worker: Worker) {
        self.worker = worker
    }

    public func run() async throws {
        defer { worker.feed.finish() }
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await worker.run()
            } onGracefulShutdown: { [worker] in
                worker.stop()
            }
        } onCancel: { [worker] in
            worker.stop()
        }
    }
}
