/// The worker's life as a state machine whose every transition returns what the loop does next (the SwiftNIO style).
///
/// Pure: the loop and its coordinators report what happened and carry out the action they get back; the health probes
/// read ``phase`` (through ``PublishedLifecycle``).
///
/// ```
/// starting ──clientsReady──> running ──stopRequested / caughtUp──> stopping ──finished──> stopped
///     │           assigned │ ^ restored                              │
///     │                restoring                                    │
///     │   checkpointFailed │     ^ backoffElapsed                     │
///     │  (delivery, disk)  v     │                                    │
///     │                   backingOff ──stopRequested──> stopping      │
///     └───────────────────────────────────────failed──────────────────┴──> failed
/// ```
/// A stop asked for while starting is kept: the loop stops as soon as the clients are up. The first failure
/// is the one reported. A delivery the broker refused rewinds the worker to its last checkpoint and backs off
/// before it retries: 1 s, doubling up to 60 s (``Backoff``), counted from the last refusal until a
/// checkpoint is written again.
///
/// Partitions lost while the worker was paused past its session (`assignmentLost`, inside the poll), or a checkpoint the
/// group's membership check refused (``WorkerError/Code/fenced``), rewind at once, uncounted: `running ──polled──>
/// backingOff(until: now)`. After a rewind the worker must show within ``Backoff/stallTimeout`` that Kafka answers
/// again, or that counts as another refusal, so an outage spends a catch-up run's budget: after a refusal, a
/// checkpoint written; after a loss, the group taking the instance back (an assignment, even of nothing: an idle
/// member of a bigger group is not stalled).
///
/// Newly assigned partitions are restored from the changelog inside the assignment (a rebalance hook run by
/// the poll): `running ──assigned──> restoring ──restored──> running`; not ready meanwhile. Kafka unreachable at
/// start-up is waited for: `starting ──connectFailed──> waitingForKafka ──(backoffElapsed: connect)──>
/// clientsReady`, with the same back-off. The retry budget (``Backoff/maxAttempts``) ends the retries of both
/// with ``WorkerError/Code/unavailable``.
struct WorkerLifecycle {
    enum State: Equatable {
        /// Loading state, connecting, checking the topics.
        case starting(stopRequested: Bool)
        /// Kafka was not reachable at start-up (`reason`, `attempts` in a row): the worker tries again at `until`.
        case waitingForKafka(reason: WorkerError, attempts: Int, until: ContinuousClock.Instant)
        /// Consuming.
        case running
        /// Bringing newly assigned partitions' devices up to the changelog's end before their input is read.
        case restoring
        /// A delivery was refused: the worker has rewound to its last checkpoint and waits until `until`
        /// before it reads and sends again; `refusals` in a row since the last written checkpoint.
        case backingOff(reason: WorkerError, refusals: Int, until: ContinuousClock.Instant)
        /// Finishing the batch in flight and the last checkpoint; `caughtUp` when every assigned partition
        /// was processed to its end (``WorkerConfiguration/untilCaughtUp``) rather than a stop asked for.
        case stopping(caughtUp: Bool)
        /// Stopped after the last checkpoint.
        case stopped(caughtUp: Bool)
        /// Stopped by this error.
        case failed(WorkerError)
    }

    /// What the loop (or the rebalance hook that reported the event) does next.
    enum Action: Equatable {
        /// Poll and apply.
        case consume
        /// Take the assignment: restore its partitions from the changelog and load their devices.
        case restore
        /// Take no part in the assignment: the worker is not running (starting, or leaving the group).
        case ignoreAssignment
        /// Connect to Kafka (again): start the clients and check the topics.
        case connect
        /// Rewind to the last checkpoint (stored state and offsets, new producers) and back off `delay`;
        /// `refusals` in a row so far.
        case rewind(reason: WorkerError, refusals: Int, delay: Duration)
        /// Read and send nothing until `until`, then report ``WorkerLifecycle/backoffElapsed(now:)`` again.
        case backOff(until: ContinuousClock.Instant)
        /// Take the last checkpoint, wait until it is written, leave the group.
        case finish(caughtUp: Bool)
        /// Return from the loop: stopped.
        case exit
        /// Stop with this error (the first one met).
        case fail(WorkerError)
        /// Nothing changes.
        case nothing
    }

    private(set) var state = State.starting(stopRequested: false)
    let backoff: Backoff
    /// Refusals since the last checkpoint written after one; the next back-off grows with it.
    private var refusals = 0
    /// The partitions were lost inside the poll under way: the loop rewinds when it returns.
    private var pendingLoss: WorkerError?
    /// After a rewind, the sign of Kafka answering again that the worker waits for, until it comes.
    private var awaiting: AwaitedSign?

    /// What shows, after a rewind, that Kafka answers again; ``Backoff/stallTimeout`` after `since` without it counts as
    /// another refusal.
    private struct AwaitedSign {
        enum Kind {
            /// A checkpoint written: the deliveries a refusal stopped go through again.
            case checkpoint
            /// An assignment: the group, which dropped the instance, took it back (its coordinator answers).
            case assignment
        }
        var kind: Kind
        /// When the worker went back to consuming (the back-off does not count).
        var since: ContinuousClock.Instant

        /// The refusal a wait past `limit` counts as.
        func stall(_ limit: Duration) -> WorkerError {
            switch kind {
            case .checkpoint:
                WorkerError(.delivery, "no checkpoint written within \(limit) of the last rewind (Kafka unreachable?)")
            case .assignment:
                WorkerError(
                    .delivery,
                    "the consumer group has not taken this instance back within \(limit) of the last rewind (Kafka unreachable?)"
                )
            }
        }
    }

    /// How long to wait before retrying after failed attempts in a row: `initial`, doubling, at most `maximum`;
    /// after `maxAttempts` failed attempts in a row (nil: never), the worker gives up.
    struct Backoff: Hashable, Sendable {
        var initial: Duration
        var maximum: Duration
        var maxAttempts: Int? = nil
        /// How long after a rewind the worker may run without a sign of Kafka answering (``AwaitedSign``) before
        /// that counts as another refusal (Kafka unreachable: nothing is read, nothing delivered); nil: for ever.
        var stallTimeout: Duration? = nil

        /// Whether `failed` attempts in a row exhaust the budget.
        func isExhausted(after failed: Int) -> Bool { maxAttempts.map { failed >= $0 } ?? false }

        func delay(afterRefusals count: Int) -> Duration {
            var delay = initial
            for _ in 1..<max(1, count) where delay < maximum { delay *= 2 }
            return min(delay, maximum)
        }
    }

    init(backoff: Backoff = Backoff(initial: .seconds(1), maximum: .seconds(60))) {
        self.backoff = backoff
    }

    /// The Kafka clients are up and the topics checked; `stopRequested` when a stop was asked for while they
    /// started (the worker then finishes at once).
    mutating func clientsReady(stopRequested: Bool = false) -> Action {
        switch state {
        case .starting(stopRequested: false) where !stopRequested, .waitingForKafka where !stopRequested:
            state = .running
            return .consume
        case .starting, .waitingForKafka:
            state = .stopping(caughtUp: false)
            return .finish(caughtUp: false)
        case .failed(let error):
            return .fail(error)
        case .running, .restoring, .backingOff, .stopping, .stopped:
            preconditionFailure("clients ready twice")
        }
    }

    /// Someone asked the worker to stop (a signal, a test, the service group).
    ///
    /// While backing off there is nothing new to checkpoint: it stops at once, its state as last stored.
    mutating func stopRequested() -> Action {
        switch state {
        case .starting:
            state = .starting(stopRequested: true)
            return .nothing
        case .waitingForKafka:
            // Nothing was read: nothing to finish.
            state = .stopped(caughtUp: false)
            return .exit
        case .running, .restoring, .backingOff:
            state = .stopping(caughtUp: false)
            return .finish(caughtUp: false)
        case .stopping, .stopped, .failed:
            return .nothing
        }
    }

    /// Every assigned partition has been processed to its end, and the worker was asked to stop there.
    mutating func caughtUp() -> Action {
        guard case .running = state else { return .nothing }
        state = .stopping(caughtUp: true)
        return .finish(caughtUp: true)
    }

    /// The group assigned partitions (inside a poll).
    ///
    /// Only a running worker takes them; one that is starting or stopping (the consumer's close serves a last
    /// rebalance) has no use for them.
    mutating func assigned() -> Action {
        guard case .running = state else { return .ignoreAssignment }
        if awaiting?.kind == .assignment { awaiting = nil }
        state = .restoring
        return .restore
    }

    /// The assignment's partitions are restored and their devices loaded: their input may be read.
    mutating func restored() -> Action {
        guard case .restoring = state else { return .nothing }
        state = .running
        return .consume
    }

    /// A poll returned (its rebalance hooks included): go on, unless a hook met a failure or lost the partitions.
    mutating func polled(now: ContinuousClock.Instant) -> Action {
        switch state {
        case .running, .restoring:
            if let loss = pendingLoss {
                pendingLoss = nil
                return fenced(loss, now: now)
            }
            if let awaiting, let limit = backoff.stallTimeout, now - awaiting.since >= limit {
                return checkpointFailed(awaiting.stall(limit), now: now)
            }
            return .consume
        case .failed(let error): return .fail(error)
        case .starting, .waitingForKafka, .backingOff, .stopping, .stopped: return .nothing
        }
    }

    /// The group gave this instance's partitions to others while it was gone past its session (the revoke hook,
    /// inside the poll): after the poll (``polled(now:)``) the loop goes back to the store, at once.
    mutating func assignmentLost(_ error: WorkerError) -> Action {
        switch state {
        case .running, .restoring: pendingLoss = error
        case .starting, .waitingForKafka, .backingOff, .stopping, .stopped, .failed: break
        }
        return .nothing
    }

    /// Whatever was in hand belongs to partitions another member holds now: rewind to the store without backing off
    /// (nothing was refused) and without counting towards the retry budget; then wait for the group to take the
    /// instance back.
    private mutating func fenced(_ error: WorkerError, now: ContinuousClock.Instant) -> Action {
        awaiting = AwaitedSign(kind: .assignment, since: now)
        state = .backingOff(reason: error, refusals: refusals, until: now)
        return .rewind(reason: error, refusals: refusals, delay: .zero)
    }

    /// A checkpoint was written: deliveries go through again, the next refusal starts the back-off afresh.
    ///
    /// One written while the worker rewinds (the one in hand when the partitions were lost) was sent before the
    /// rewind: it shows nothing of what the rewind waits for.
    mutating func checkpointWritten() -> Action {
        switch state {
        case .running, .restoring:
            refusals = 0
            awaiting = nil
            return .consume
        case .stopping:
            refusals = 0
            awaiting = nil
            return .nothing
        case .starting, .waitingForKafka, .backingOff, .stopped, .failed: return .nothing
        }
    }

    /// A checkpoint could not be written.
    ///
    /// A delivery the broker refused for good, or a write the disk refused (full, failing), rewinds and backs off, longer with each refusal in a row, until
    /// the retry budget is spent (then the worker gives up: ``WorkerError/Code/unavailable``). A catch-up run
    /// that met the refusal at its last checkpoint goes back the same way: it ends well only with everything
    /// delivered. A stop asked for does not go back: the stop goes on, nothing after the last written
    /// checkpoint stored (a restart replays it). A checkpoint dropped because the group had given the partitions to
    /// another member (``WorkerError/Code/fenced``) rewinds at once, uncounted. Any other failure (the store) is final.
    mutating func checkpointFailed(_ error: WorkerError, now: ContinuousClock.Instant) -> Action {
        guard error.isCheckpointRefusal else { return failed(error) }
        switch state {
        case .running, .restoring, .backingOff, .stopping(caughtUp: true):
            if error.code == .fenced { return fenced(error, now: now) }
            refusals += 1
            guard !backoff.isExhausted(after: refusals) else {
                let what = error.code == .delivery ? "deliveries refused" : "state not written"
                return failed(Self.givingUp(after: refusals, what, error))
            }
            let delay = backoff.delay(afterRefusals: refusals)
            // Not taken back into the group yet: that is still what shows Kafka answers.
            awaiting = AwaitedSign(kind: awaiting?.kind ?? .checkpoint, since: now)
            state = .backingOff(reason: error, refusals: refusals, until: now + delay)
            return .rewind(reason: error, refusals: refusals, delay: delay)
        case .starting, .waitingForKafka, .stopping, .stopped, .failed:
            return .nothing
        }
    }

    /// Connecting to Kafka failed at start-up.
    ///
    /// A passing condition (no broker reachable, a timeout) is waited out with the back-off, until the retry
    /// budget is spent; anything else (a topic missing, a property refused) is final.
    mutating func connectFailed(_ error: WorkerError, now: ContinuousClock.Instant) -> Action {
        let attempts: Int
        switch state {
        case .starting(stopRequested: false): attempts = 1
        case .waitingForKafka(_, let before, _): attempts = before + 1
        case .starting(stopRequested: true), .running, .restoring, .backingOff, .stopping, .stopped, .failed:
            return failed(error)
        }
        guard error.isRetriable else { return failed(error) }
        guard !backoff.isExhausted(after: attempts) else {
            return failed(Self.givingUp(after: attempts, "Kafka unreachable", error))
        }
        let until = now + backoff.delay(afterRefusals: attempts)
        state = .waitingForKafka(reason: error, attempts: attempts, until: until)
        return .backOff(until: until)
    }

    /// The error a worker gives up with: what failed how often, and the last failure.
    private static func givingUp(after attempts: Int, _ what: String, _ last: WorkerError) -> WorkerError {
        WorkerError(.unavailable, "giving up after \(attempts) attempts in a row (\(what)): \(last)", underlying: last)
    }

    /// The loop checks whether the back-off is over at `now`: consume (or connect) again, or go on waiting.
    mutating func backoffElapsed(now: ContinuousClock.Instant) -> Action {
        switch state {
        case .backingOff(_, _, let until):
            guard now >= until else { return .backOff(until: until) }
            state = .running
            awaiting?.since = now
            return .consume
        case .waitingForKafka(_, _, let until):
            // Still waiting for Kafka: the state stays until the next attempt succeeds or fails.
            return now >= until ? .connect : .backOff(until: until)
        case .starting, .running, .restoring, .stopping, .stopped, .failed:
            return .nothing
        }
    }

    /// Something failed for good (also from inside a rebalance hook, where it cannot be thrown).
    mutating func failed(_ error: WorkerError) -> Action {
        switch state {
        case .failed(let first):
            return .fail(first)
        case .stopped:
            return .nothing
        case .starting, .waitingForKafka, .running, .restoring, .backingOff, .stopping:
            state = .failed(error)
            return .fail(error)
        }
    }

    /// The last checkpoint is written (or refused) and the group left.
    mutating func finished() -> Action {
        switch state {
        case .stopping(let caughtUp):
            state = .stopped(caughtUp: caughtUp)
            return .exit
        case .stopped:
            return .exit
        case .failed(let error):
            return .fail(error)
        case .starting, .waitingForKafka, .running, .restoring, .backingOff:
            preconditionFailure("finished without stopping")
        }
    }

    /// Whether the worker stopped because it caught up with its input.
    var stoppedCaughtUp: Bool { state == .stopped(caughtUp: true) }

    /// The error the worker failed with, if it did.
    var failure: WorkerError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// Why the worker is not healthy, for the probes: the refused delivery while backing off, the failure.
    var reason: String? {
        switch state {
        case .backingOff(let error, let refusals, _): "\(error) (attempt \(refusals) in a row; rewound, retrying)"
        case .waitingForKafka(let error, let attempts, _): "waiting for Kafka: \(error) (attempt \(attempts) in a row)"
        case .failed(let error): "\(error)"
        case .starting, .running, .restoring, .stopping, .stopped: nil
        }
    }

    /// The phase the health probes report.
    var phase: WorkerHealth.Phase {
        switch state {
        case .starting, .waitingForKafka: .starting
        case .running: .running
        case .restoring: .restoring
        case .backingOff: .backingOff
        case .stopping: .stopping
        case .stopped: .stopped
        case .failed: .failed
        }
    }
}
