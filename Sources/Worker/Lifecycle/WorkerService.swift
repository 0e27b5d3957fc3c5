public import ServiceLifecycle

/// The ``Worker`` as a swift-service-lifecycle service.
///
/// Graceful shutdown (SIGTERM/SIGINT through the `ServiceGroup`) asks it to stop, and it returns once it has finished the batch in flight, checkpointed and left the group;
/// cancellation (the group's stop deadline passed) asks it to stop without waiting for a checkpoint or a commit
/// (``Worker/cancel()``). Then it ends the live event streams (``EventFeed/finish()``), which would otherwise hold the
/// HTTP server's stop up.
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
            // Past the group's stop deadline: the worker gives up its stop's waits, so that it returns in time.
            worker.cancel()
        }
    }
}
