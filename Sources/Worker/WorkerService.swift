public import ServiceLifecycle

/// The ``Worker`` as a swift-service-lifecycle service: graceful shutdown (SIGTERM/SIGINT through the
/// `ServiceGroup`) and cancellation both ask it to stop, and it returns once it has finished the batch in
/// flight, checkpointed and left the group. The worker's loop runs on a thread of its own.
public struct WorkerService: Service {
    public let worker: Worker

    public init(worker: Worker) {
        self.worker = worker
    }

    public func run() async throws {
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
