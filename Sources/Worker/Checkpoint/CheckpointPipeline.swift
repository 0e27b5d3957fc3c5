import Kafka

/// The states of the checkpoint pipeline, as a state machine whose transitions return what to do (the SwiftNIO style):
/// ``CheckpointWriter`` carries the actions out with a thread, a lock and the store, and this type decides.
///
/// Pure, so every order of events is tested without Kafka or SQLite.
///
/// One checkpoint at a time is with the writing thread, and checkpoints reach it in the order they were taken. The
/// loop takes the next one only once the writer is free (``isWriting``): while a checkpoint waits for its deliveries
/// or for SQLite, the loop goes on consuming and the changes gather in the registries for the next one, so a slow
/// disk or changelog delays checkpoints, not events. A submit while one is being written (a stop's last checkpoint)
/// waits for it (``SubmitAction/waitForWriter``). Once a write fails,
/// nothing later is written (a later checkpoint would cover messages whose events were lost) and every
/// call reports that first failure. A stop lets the write in hand finish.
///
/// A record the broker refused for good, or a write the disk refused (``WorkerError/isCheckpointRefusal``), is
/// not the end: the pipeline is
/// ``State/refused(_:)`` until the worker has rewound to the last written checkpoint (``rewound()``), then
/// idle again; any other failure (SQLite) is final.
struct CheckpointPipeline {
    enum State {
        /// No checkpoint with the writing thread.
        case idle
        /// One checkpoint with the writing thread: waiting for its deliveries, or in SQLite.
        case writing
        /// A stop came while a checkpoint was being written: it finishes, nothing new starts.
        case stopping
        /// Stopped with everything submitted written; the writing thread may end.
        case stopped
        /// The broker refused a checkpoint's records, or the disk its write; nothing is written until the worker
        /// rewinds.
        case refused(WorkerError)
        /// A write failed; nothing is written from now on.
        case failed(WorkerError)
    }

    private(set) var state = State.idle
    /// What was written since the last ``takeWritten()``.
    private var written = Written()

    /// Checkpoints written: how many, and the next input offsets they stored (the newest per partition).
    struct Written: Equatable {
        var count = 0
        var offsets: [TopicPartition: Int64] = [:]
    }

    enum SubmitAction {
        /// Hand the checkpoint to the writing thread.
        case write(Checkpoint)
        /// The previous checkpoint is still being written: wait for it, then submit again.
        case waitForWriter
        /// The checkpoint covers nothing: there is nothing to write.
        case skip
        /// An earlier checkpoint failed; this one is dropped.
        case fail(WorkerError)
    }

    /// The loop submits a checkpoint.
    mutating func submit(_ checkpoint: Checkpoint) -> SubmitAction {
        switch state {
        case .idle:
            guard !checkpoint.isEmpty else { return .skip }
            state = .writing
            return .write(checkpoint)
        case .writing:
            return .waitForWriter
        case .refused(let error), .failed(let error):
            return .fail(error)
        case .stopping, .stopped:
            preconditionFailure("checkpoint submitted to a stopped CheckpointWriter")
        }
    }

    enum WaitAction {
        /// Everything submitted is written.
        case done
        /// A checkpoint is still being written.
        case waitForWriter
        /// A write failed.
        case fail(WorkerError)
    }

    /// Someone waits until everything submitted is written.
    func waitUntilWritten() -> WaitAction {
        switch state {
        case .idle, .stopped: .done
        case .writing, .stopping: .waitForWriter
        case .refused(let error), .failed(let error): .fail(error)
        }
    }

    /// The writing thread finished a checkpoint: its offsets, or why it could not be written.
    ///
    /// Waiters are woken whatever the result.
    mutating func writeFinished(_ result: Result<[TopicPartition: Int64], WorkerError>) {
        switch (state, result) {
        case (.writing, .success(let offsets)), (.stopping, .success(let offsets)):
            written.offsets.merge(offsets) { $1 }
            written.count += 1
            if case .stopping = state { state = .stopped } else { state = .idle }
        case (.writing, .failure(let error)) where error.isCheckpointRefusal:
            state = .refused(error)
        case (.writing, .failure(let error)), (.stopping, .failure(let error)):
            state = .failed(error)
        case (.idle, _), (.stopped, _), (.refused, _), (.failed, _):
            preconditionFailure("a write finished that was never started")
        }
    }

    /// What was written since the last call, and forgets it.
    mutating func takeWritten() -> Written {
        defer { written = Written() }
        return written
    }

    /// The worker has put its state and input back as of the store: what was refused will be applied and sent again, so
    /// checkpoints may be written again.
    ///
    /// Nothing else changes.
    mutating func rewound() {
        guard case .refused = state else { return }
        state = .idle
    }

    enum StopAction {
        /// Nothing is being written: end the writing thread.
        case stopThread
        /// A checkpoint is being written: wait for it, then stop again.
        case waitForWriter
    }

    /// The worker stops the pipeline.
    mutating func stop() -> StopAction {
        switch state {
        case .idle:
            state = .stopped
            return .stopThread
        case .writing, .stopping:
            state = .stopping
            return .waitForWriter
        case .stopped, .refused, .failed:
            return .stopThread
        }
    }

    /// Whether a checkpoint is with the writing thread: a checkpoint submitted now would wait for it.
    var isWriting: Bool {
        switch state {
        case .writing, .stopping: true
        case .idle, .stopped, .refused, .failed: false
        }
    }

    /// The failure that stopped the writing, if any: a refusal until the worker rewinds, or a final failure.
    var failure: WorkerError? {
        switch state {
        case .refused(let error), .failed(let error): error
        case .idle, .writing, .stopping, .stopped: nil
        }
    }
}
