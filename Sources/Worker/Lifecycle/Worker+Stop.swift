import Kafka
import Logging
import Synchronization

/// How the worker stops: asked to (``stop()``), it finishes the batch in flight, takes its last checkpoint, commits
/// it to the group and leaves; cancelled (``cancel()``, a stop past its deadline), it gives up those waits.
extension Worker {
    /// Asks ``run()`` to finish: it completes the batch in flight, checkpoints, leaves the group and returns.
    ///
    /// Safe from any thread (a signal handler's task, for example).
    public func stop() {
        stopRequest.ask()
    }

    func isStopRequested() -> Bool { stopRequest.isAsked }

    /// Asks ``run()`` to stop at once: what a stop past its deadline does (the service group cancels it).
    ///
    /// As ``stop()``, but the stop no longer waits for the checkpoint in hand nor for the group's answer to its last
    /// commit: the store keeps the checkpoints written whole, and a restart replays the rest. Safe from any thread.
    public func cancel() {
        waitsAbandoned.store(true, ordering: .releasing)
        stop()
    }

    /// Whether the stop's waits are given up (``cancel()``).
    func areWaitsAbandoned() -> Bool { waitsAbandoned.load(ordering: .acquiring) }

    /// The last checkpoint, with what the last poll released applied first; the group's offsets committed,
    /// waiting for the answer; the run summed up.
    func finish(
        _ connection: WorkerAssembly.Connection,
        caughtUp: Bool,
        firstMessage: ContinuousClock.Instant?
    ) -> WorkerLifecycle.Action {
        let lifecycle = parts.lifecycle
        let afterLast = parts.progress.stop({ checkpointSource(connection) }, keepWaiting: { !areWaitsAbandoned() })
        guard afterLast == .consume else { return afterLast }
        parts.progress.commitStored(
            of: connection.consumer.assignment,
            consumer: connection.consumer,
            waitingUnless: { [self] in areWaitsAbandoned() }
        )
        if caughtUp {
            // From the first message to the last checkpoint: what replays and benchmarks want to know.
            let counters = counters
            logger.info(
                "caught up with every assigned partition",
                metadata: [
                    ServiceLogKey.positions: "\(counters.positions)", ServiceLogKey.commands: "\(counters.commands)",
                    ServiceLogKey.elapsed: "\(firstMessage.map { clock.now - $0 } ?? .zero)",
                ]
            )
        }
        noteFinished(caughtUp: caughtUp)
        // The dead letters since the last line, whatever its interval: the log of a run holds every one.
        deadLetterLog.note(counters, logger: logger, whateverTheInterval: true)
        logger.info("geoworker stopped", metadata: [ServiceLogKey.devices: "\(parts.devices.holdings.devices)"])
        return lifecycle.report { $0.finished() }
    }
}
