/// The worker's life as a state machine whose transitions return what the loop does next (the SwiftNIO
/// style). Pure: the loop reports what happened (clients ready, a stop asked for, the end of the input
/// reached, a failure, the last checkpoint written) and carries out the action it gets back; the health
/// probes read ``phase``.
///
/// ```
/// starting ──clientsReady──> running ──stopRequested / caughtUp──> stopping ──finished──> stopped
///     │                         │                                     │
///     └─────────────────────────┴──────────────failed─────────────────┴──> failed
/// ```
/// A stop asked for while starting is kept: the loop stops as soon as the clients are up. The first
/// failure is the one reported.
///
/// Room for what comes next: a refused delivery backing off, rewinding to the last checkpoint and restoring
/// assigned partitions from the changelog are further states between `running` and `stopping`, each with
/// its own action for the loop.
struct WorkerLifecycle {
    enum State {
        /// Loading state, connecting, checking the topics.
        case starting(stopRequested: Bool)
        /// Consuming.
        case running
        /// Finishing the batch in flight and the last checkpoint; `caughtUp` when every assigned partition
        /// was processed to its end (``WorkerConfiguration/untilCaughtUp``) rather than a stop asked for.
        case stopping(caughtUp: Bool)
        /// Stopped after the last checkpoint.
        case stopped(caughtUp: Bool)
        /// Stopped by this error.
        case failed(WorkerError)
    }

    private(set) var state = State.starting(stopRequested: false)

    /// What the loop does next.
    enum Action {
        /// Poll and apply.
        case consume
        /// Take the last checkpoint, wait until it is written, leave the group.
        case finish(caughtUp: Bool)
        /// Nothing changes.
        case none
        /// Stop with this error (the first one met).
        case fail(WorkerError)
    }

    /// The Kafka clients are up and the topics checked.
    mutating func clientsReady() -> Action {
        switch state {
        case .starting(stopRequested: false):
            state = .running
            return .consume
        case .starting(stopRequested: true):
            state = .stopping(caughtUp: false)
            return .finish(caughtUp: false)
        case .failed(let error):
            return .fail(error)
        case .running, .stopping, .stopped:
            preconditionFailure("clients ready twice")
        }
    }

    /// Someone asked the worker to stop (a signal, a test, the service group).
    mutating func stopRequested() -> Action {
        switch state {
        case .starting:
            state = .starting(stopRequested: true)
            return .none
        case .running:
            state = .stopping(caughtUp: false)
            return .finish(caughtUp: false)
        case .stopping, .stopped, .failed:
            return .none
        }
    }

    /// Every assigned partition has been processed to its end, and the worker was asked to stop there.
    mutating func caughtUp() -> Action {
        guard case .running = state else { return .none }
        state = .stopping(caughtUp: true)
        return .finish(caughtUp: true)
    }

    /// Something failed for good (also from inside a rebalance hook, where it cannot be thrown).
    mutating func failed(_ error: WorkerError) -> Action {
        switch state {
        case .failed(let first):
            return .fail(first)
        case .stopped:
            return .none
        case .starting, .running, .stopping:
            state = .failed(error)
            return .fail(error)
        }
    }

    /// The last checkpoint is written and the group left.
    mutating func finished() {
        guard case .stopping(let caughtUp) = state else { return }
        state = .stopped(caughtUp: caughtUp)
    }

    /// Whether the loop should go on polling.
    var isConsuming: Bool {
        if case .running = state { return true }
        return false
    }

    /// The error the worker failed with, if it did.
    var failure: WorkerError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// The phase the health probes report.
    var phase: WorkerHealth.Phase {
        switch state {
        case .starting: .starting
        case .running: .running
        case .stopping: .stopping
        case .stopped: .stopped
        case .failed: .failed
        }
    }
}
