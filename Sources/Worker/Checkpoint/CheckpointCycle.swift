import Kafka

/// Decides the checkpoint's every step for the loop.
///
/// When one is taken, what follows the writer's answer, and how a rebalance, a rewind or a stop waits for the one in
/// hand: a pure state machine whose events return the step the loop carries out (the SwiftNIO style); the loop alone
/// owns it, with the ``CheckpointWriter`` that writes.
///
/// | State | Event | Step | Next state |
/// |---|---|---|---|
/// | idle | ``turn(now:)``, interval passed | take | idle |
/// | idle | ``taken(isEmpty:now:scope:)``, changes | write(storing: ``scope(now:storing:)`` stores) | writing |
/// | idle | ``taken(isEmpty:now:scope:)`` complete, nothing (no backlog to store) | upToDate | idle |
/// | idle | ``taken(isEmpty:now:scope:)`` eventful, nothing | none | idle |
/// | writing | ``turn(now:)`` | none (changes gather for the next) | writing |
/// | writing | ``settle()`` (assignment, revocation, rewind, stop) | waitForWriter | writing |
/// | writing | ``answered(_:)`` written (stored, or into the backlog) | written | idle |
/// | idle | ``storeNow()`` with a backlog (before an assignment or a rewind reads the store) | storeBacklog | idle |
/// | idle | ``backlogStored(_:now:)``: stored / refused / failed | none / none / fail | idle / refused / failed |
/// | writing | ``answered(_:)`` refused: delivery, disk full, fenced | none (``refusal`` reported after the poll) | refused |
/// | writing | ``answered(_:)`` failed (SQLite) | fail | failed |
/// | refused | ``turn(now:)``, ``taken(isEmpty:now:scope:)`` | none: nothing is taken until the rewind | refused |
/// | refused | ``rewound()`` | none | idle |
/// | idle, refused | ``stopped()`` | none | stopped |
/// | writing | ``stopped()``: the stop's wait given up | none: the answer is not waited for | stopped |
/// | stopped, failed | any | none, or the failure | same |
///
/// A checkpoint is complete (every changed device, the input offsets applied) when it is stored, and at every checkpoint
/// under exactly-once; the others, between two stored ones, log only the eventful changes (``Scope/eventful``).
///
/// A lost assignment is not an event of its own: the loop rewinds after the poll, and a checkpoint the writer has in
/// hand meets the group's ``MembershipCheck`` and is answered `fenced` (refused) before its changelog records go out.
/// One checkpoint at a time is with the writer, and checkpoints reach it in the order they were taken; while it
/// writes, the loop consumes on and the changes gather for the next one, so a slow disk or changelog delays
/// checkpoints, never events.
struct CheckpointCycle: Equatable {
    enum State: Equatable {
        /// Nothing with the writer.
        case idle
        /// One checkpoint with the writer: waiting for its deliveries, or in SQLite.
        case writing
        /// The writer refused the last checkpoint (a delivery the broker refused for good, a write the disk refused,
        /// the group's membership check): nothing is taken until the loop has rewound to the store.
        case refused(WorkerError)
        /// The last checkpoint is settled: nothing more is taken.
        case stopped
        /// A write failed for good (the store): nothing is written from now on.
        case failed(WorkerError)
    }

    /// What the loop does.
    enum Step: Equatable {
        /// Nothing.
        case nothing
        /// Finish the apply threads, take a checkpoint of the ``scope(now:storing:)`` and report
        /// ``taken(isEmpty:now:scope:)``.
        case take
        /// Hand the checkpoint just taken to the writer; `storing`: to the store too, with the backlog (else the store
        /// lags the changelog by it: ``StoreBacklog``).
        case write(storing: Bool)
        /// Nothing to write: the store holds everything applied (the up-to-date gauge moves).
        case upToDate
        /// Wait for the writer's answer and report it (``answered(_:)``).
        case waitForWriter
        /// Written: note what it covers (logged, and stored when it was), commit to the group, tell the lifecycle.
        case written(CheckpointWriter.Written)
        /// Write the backlog to the store before the store is read, and report ``backlogStored(_:now:)``.
        case storeBacklog
        /// The store failed: the worker fails with this error.
        case fail(WorkerError)
    }

    /// What a checkpoint covers.
    enum Scope: Equatable {
        /// Every device changed since it was last logged and the input offsets applied: what a restart resumes from.
        /// Stored when `storing`.
        case complete(storing: Bool)
        /// The devices with an eventful change only (an event sent, a command applied:
        /// ``GeoCore/DeviceRegistry/Changes/eventful``), and no input offset; never stored.
        ///
        /// A steady stream changes most devices at every fix and few with an event. A restart reads again from the last
        /// complete checkpoint: it applies the other devices' fixes again to the states they were applied to, which
        /// sends nothing, and skips what each logged device reflects; so no event is repeated for what an eventful
        /// checkpoint left out.
        case eventful
    }

    private(set) var state = State.idle
    /// How often a checkpoint is taken, at most.
    let interval: Duration
    /// How long the store may lag the changelog; nil when every checkpoint is stored (no changelog to restore from).
    let storeInterval: Duration?
    /// When the last checkpoint was taken (or the cycle began).
    private(set) var lastTaken: ContinuousClock.Instant
    /// When the last stored checkpoint was taken (or the cycle began).
    private(set) var lastStored: ContinuousClock.Instant
    /// Whether checkpoints were written to the changelog and not yet to the store (the writer's backlog).
    private(set) var hasBacklog = false
    /// Whether the checkpoints between two stored ones are eventful only (at-least-once); else every one is complete
    /// (exactly-once: each commits its input offsets, which a restart resumes from).
    let logsEventfulBetweenStores: Bool

    /// - Parameters:
    ///   - interval: how often a checkpoint is taken, at most.
    ///   - storeInterval: how long the store may lag the changelog; nil: every checkpoint is stored.
    ///   - logsEventfulBetweenStores: whether a checkpoint that is not stored logs the eventful changes only.
    ///   - now: when the cycle begins.
    init(
        interval: Duration,
        storeInterval: Duration? = nil,
        logsEventfulBetweenStores: Bool = false,
        startedAt now: ContinuousClock.Instant
    ) {
        self.interval = interval
        self.storeInterval = storeInterval
        self.logsEventfulBetweenStores = logsEventfulBetweenStores
        lastTaken = now
        lastStored = now
    }

    /// A turn of the loop at `now`: a checkpoint is taken once the interval has passed since the last and the writer is
    /// free.
    func turn(now: ContinuousClock.Instant) -> Step {
        guard case .idle = state, now - lastTaken >= interval else { return .nothing }
        return .take
    }

    /// Before an assignment, a revocation, a rewind or the last checkpoint: the one in hand ends first.
    func settle() -> Step {
        state == .writing ? .waitForWriter : .nothing
    }

    /// Whether a checkpoint may be taken now, out of turn (a revocation's, the last one): the writer is free and
    /// nothing was refused.
    var canTake: Bool { state == .idle }

    /// What a checkpoint taken at `now` covers: stored when `storing` asks it (a revocation's, the last one) or the store
    /// interval has passed since the last stored, and then complete; else complete or eventful by the guarantee.
    func scope(now: ContinuousClock.Instant, storing: Bool = false) -> Scope {
        let storing = storing || storeInterval.map { now - lastStored >= $0 } ?? true
        return storing || !logsEventfulBetweenStores ? .complete(storing: storing) : .eventful
    }

    /// A checkpoint of `scope` was taken at `now`; `isEmpty` when it covers nothing.
    mutating func taken(isEmpty: Bool, now: ContinuousClock.Instant, scope: Scope) -> Step {
        guard case .idle = state else {
            preconditionFailure("a checkpoint taken while the cycle is \(state)")
        }
        lastTaken = now
        switch scope {
        case .eventful:
            if isEmpty { return .nothing }
            state = .writing
            return .write(storing: false)
        case .complete(let storing):
            if isEmpty && !(storing && hasBacklog) { return .upToDate }
            state = .writing
            return .write(storing: storing)
        }
    }

    /// The writer answered: the input offsets stored, or why the checkpoint was not written.
    mutating func answered(_ answer: CheckpointWriter.Answer) -> Step {
        guard case .writing = state else { preconditionFailure("an answer to no write, the cycle \(state)") }
        switch answer {
        case .success(let written):
            state = .idle
            if written.stored != nil {
                hasBacklog = false
                lastStored = lastTaken
            } else {
                hasBacklog = true
            }
            return .written(written)
        case .failure(let error) where error.isCheckpointRefusal:
            state = .refused(error)
            return .nothing
        case .failure(let error):
            state = .failed(error)
            return .fail(error)
        }
    }

    /// Before the store is read: the backlog goes to it first.
    ///
    /// An assignment loads devices from the store, a rewind goes back to it. Only once the writer is settled.
    func storeNow() -> Step {
        guard hasBacklog, state != .writing else { return .nothing }
        return .storeBacklog
    }

    /// The writer wrote its backlog to the store (taken at `now`), or could not; a rewind then drops it (the store as
    /// it stands is where it goes back to, and applying again logs it again).
    mutating func backlogStored(_ result: Result<Void, WorkerError>, now: ContinuousClock.Instant) -> Step {
        switch result {
        case .success:
            hasBacklog = false
            lastStored = now
            return .nothing
        case .failure(let error) where error.isCheckpointRefusal:
            if state == .idle { state = .refused(error) }
            return .nothing
        case .failure(let error):
            state = .failed(error)
            return .fail(error)
        }
    }

    /// The worker rewound past the backlog, which the writer dropped.
    mutating func backlogDropped() {
        hasBacklog = false
    }

    /// The refusal the loop reports to the lifecycle after the poll (which rewinds), until it has rewound.
    var refusal: WorkerError? {
        if case .refused(let error) = state { return error }
        return nil
    }

    /// The worker has put its devices and input back as of the store: what was refused is applied and sent again, and
    /// checkpoints are taken again (the next as soon as it is due: whether deliveries go through again shows early).
    mutating func rewound() {
        guard case .refused = state else { return }
        state = .idle
    }

    /// The worker stops: nothing more is taken.
    ///
    /// With a checkpoint still in hand the stop gave up waiting for it (its deadline passed): whether the writer ends
    /// it or not, the store holds whole checkpoints only, and a restart replays what it lacks.
    mutating func stopped() {
        switch state {
        case .idle, .writing, .refused: state = .stopped
        case .stopped, .failed: break
        }
    }
}
