import Kafka
import PartitionOffsets
import StateStore
import Testing

@testable import Worker

/// Every transition of the checkpoint's state machine, as a table.
///
/// Where the cycle is (the events that bring it there), what happens, the step the loop is told to carry out, where the cycle is after. In process, on explicit
/// instants of a test clock: no thread, Kafka, SQLite or sleep.
@Suite("The checkpoint cycle's transitions", .timeLimit(.minutes(5)))
struct CheckpointCycleTests {
    static let start = ContinuousClock.now
    static let interval = Duration.seconds(5)
    static let positions0 = TopicPartition("positions", 0)

    /// Something that happens to the cycle.
    enum Event: CustomStringConvertible {
        /// A turn of the loop, this long after the start.
        case turn(at: Duration)
        /// A checkpoint taken at this moment, covering something or nothing; `storing` when the store must hold it.
        case taken(isEmpty: Bool, at: Duration, storing: Bool = false)
        /// An assignment or a rewind is about to read the store.
        case storeNow
        /// The writer's backlog written to the store, or not, at this moment.
        case backlogStored(Result<Void, WorkerError>, at: Duration)
        /// The writer's answer.
        case answered(CheckpointWriter.Answer)
        /// An assignment, a revocation, a rewind or a stop asks for the checkpoint in hand.
        case settle
        /// The loop has rewound to the store.
        case rewound
        /// The worker stops.
        case stopped

        var description: String {
            switch self {
            case .turn(let at): "turn at \(at)"
            case .taken(let isEmpty, let at, let storing):
                "taken (\(isEmpty ? "empty" : "changes")\(storing ? ", to be stored" : "")) at \(at)"
            case .storeNow: "store now"
            case .backlogStored(.success, let at): "backlog stored at \(at)"
            case .backlogStored(.failure(let error), _): "backlog not stored: \(error.code)"
            case .answered(.success(let written)):
                "written \(written.logged.values.sorted()), stored: \(written.stored != nil)"
            case .answered(.failure(let error)): "answered \(error.code)"
            case .settle: "settle"
            case .rewound: "rewound"
            case .stopped: "stopped"
            }
        }
    }

    static let delivered: CheckpointWriter.Answer = .success(.init(logged: [positions0: 42], stored: [positions0: 42]))
    /// Delivered to the changelog, into the backlog: not stored.
    static let logged: CheckpointWriter.Answer = .success(.init(logged: [positions0: 42], stored: nil))
    static let refusedDelivery = WorkerError(
        .delivery,
        "could not deliver 3 records to events",
        underlying: DeliveryRefusal(reports: [])
    )
    /// What SQLite says when the file system is full (SQLITE_FULL).
    static let diskFull = WorkerError(
        .state,
        "cannot write state",
        underlying: StateStoreError(code: .write, message: "database or disk is full", sqliteCode: 13)
    )
    static let fenced = WorkerError(.fenced, "the group had given this instance's partitions to another member")
    static let storeFailed = WorkerError(.state, "cannot write state")

    /// One row of the table.
    struct Transition: CustomTestStringConvertible, Sendable {
        let name: String
        /// The events that bring the cycle to the row's state, from a new cycle.
        let given: [Event]
        let event: Event
        let step: CheckpointCycle.Step
        let state: CheckpointCycle.State
        /// The cycle's store interval: nil (the store written at every checkpoint) unless the row says.
        var storeInterval: Duration? = nil
        /// Whether the checkpoints between stored ones log the eventful changes only (at-least-once), unless the row
        /// says.
        var eventfulBetweenStores = false

        var testDescription: String { name }
    }

    static let writing: [Event] = [.turn(at: .seconds(5)), .taken(isEmpty: false, at: .seconds(5))]

    static let table: [Transition] = [
        Transition(
            name: "idle, interval not passed: nothing",
            given: [],
            event: .turn(at: .seconds(4)),
            step: .nothing,
            state: .idle
        ),
        Transition(
            name: "idle, interval passed: take",
            given: [],
            event: .turn(at: .seconds(5)),
            step: .take,
            state: .idle
        ),
        Transition(
            name: "taken with changes: write",
            given: [.turn(at: .seconds(5))],
            event: .taken(isEmpty: false, at: .seconds(5)),
            step: .write(storing: true),
            state: .writing
        ),
        Transition(
            name: "taken with nothing: up to date, no write",
            given: [.turn(at: .seconds(5))],
            event: .taken(isEmpty: true, at: .seconds(5)),
            step: .upToDate,
            state: .idle
        ),
        Transition(
            name: "interval counted from the last taken",
            given: [.taken(isEmpty: true, at: .seconds(7))],
            event: .turn(at: .seconds(11)),
            step: .nothing,
            state: .idle
        ),
        Transition(
            name: "writing, due again: nothing, the changes gather",
            given: writing,
            event: .turn(at: .seconds(60)),
            step: .nothing,
            state: .writing
        ),
        Transition(
            name: "writing, settle: wait for the writer",
            given: writing,
            event: .settle,
            step: .waitForWriter,
            state: .writing
        ),
        Transition(name: "idle, settle: nothing to wait for", given: [], event: .settle, step: .nothing, state: .idle),
        Transition(
            name: "written (delivered, changelog sent, rows committed): stored offsets",
            given: writing,
            event: .answered(delivered),
            step: .written(.init(logged: [positions0: 42], stored: [positions0: 42])),
            state: .idle
        ),
        Transition(
            name: "delivery refused: refused, reported after the poll",
            given: writing,
            event: .answered(.failure(refusedDelivery)),
            step: .nothing,
            state: .refused(refusedDelivery)
        ),
        Transition(
            name: "disk full: refused like a delivery",
            given: writing,
            event: .answered(.failure(diskFull)),
            step: .nothing,
            state: .refused(diskFull)
        ),
        Transition(
            name: "fenced by the membership check (assignment lost): refused",
            given: writing,
            event: .answered(.failure(fenced)),
            step: .nothing,
            state: .refused(fenced)
        ),
        Transition(
            name: "the store fails: fail",
            given: writing,
            event: .answered(.failure(storeFailed)),
            step: .fail(storeFailed),
            state: .failed(storeFailed)
        ),
        Transition(
            name: "refused, due: nothing is taken until the rewind",
            given: writing + [.answered(.failure(refusedDelivery))],
            event: .turn(at: .seconds(60)),
            step: .nothing,
            state: .refused(refusedDelivery)
        ),
        Transition(
            name: "refused, rewound: idle, the next checkpoint when due",
            given: writing + [.answered(.failure(refusedDelivery))],
            event: .rewound,
            step: .nothing,
            state: .idle
        ),
        Transition(
            name: "rewound after a loss with nothing refused: unchanged",
            given: writing + [.answered(delivered)],
            event: .rewound,
            step: .nothing,
            state: .idle
        ),
        Transition(name: "stopping idle: stopped", given: [], event: .stopped, step: .nothing, state: .stopped),
        Transition(
            name: "stopping refused: stopped, the store as last written",
            given: writing + [.answered(.failure(diskFull))],
            event: .stopped,
            step: .nothing,
            state: .stopped
        ),
        Transition(
            name: "stopping with the wait given up: stopped",
            given: writing,
            event: .stopped,
            step: .nothing,
            state: .stopped
        ),
        Transition(
            name: "stopped, due: nothing",
            given: [.stopped],
            event: .turn(at: .seconds(60)),
            step: .nothing,
            state: .stopped
        ),
        // The store lagging the changelog (a store interval of 10 s).
        Transition(
            name: "store interval not passed: to the changelog only, into the backlog",
            given: [],
            event: .taken(isEmpty: false, at: .seconds(5)),
            step: .write(storing: false),
            state: .writing,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "store interval passed since the last stored: stored with the backlog",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .taken(isEmpty: false, at: .seconds(10)),
            step: .write(storing: true),
            state: .writing,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "a revocation's or the last checkpoint: stored whatever the interval",
            given: [],
            event: .taken(isEmpty: false, at: .seconds(5), storing: true),
            step: .write(storing: true),
            state: .writing,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "nothing new, a backlog, the store asked for: the backlog is written",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .taken(isEmpty: true, at: .seconds(6), storing: true),
            step: .write(storing: true),
            state: .writing,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "nothing new, a backlog, not due: up to date",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .taken(isEmpty: true, at: .seconds(6)),
            step: .upToDate,
            state: .idle,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "the store about to be read, a backlog: store it",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .storeNow,
            step: .storeBacklog,
            state: .idle,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "the store about to be read, the last checkpoint stored: nothing",
            given: writing + [.answered(delivered)],
            event: .storeNow,
            step: .nothing,
            state: .idle
        ),
        Transition(
            name: "the backlog stored: idle, the store interval counted from then",
            given: [
                .taken(isEmpty: false, at: .seconds(5)), .answered(logged),
                .backlogStored(.success(()), at: .seconds(7)),
            ],
            event: .taken(isEmpty: false, at: .seconds(16)),
            step: .write(storing: false),
            state: .writing,
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "the backlog refused (disk full): refused, the rewind goes back to the store as it stands",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .backlogStored(.failure(diskFull), at: .seconds(7)),
            step: .nothing,
            state: .refused(diskFull),
            storeInterval: .seconds(10)
        ),
        Transition(
            name: "the backlog's store failing: fail",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .backlogStored(.failure(storeFailed), at: .seconds(7)),
            step: .fail(storeFailed),
            state: .failed(storeFailed),
            storeInterval: .seconds(10)
        ),
        // At-least-once: between two stored checkpoints only the eventful changes are logged.
        Transition(
            name: "eventful between stores, with eventful changes: to the changelog only",
            given: [],
            event: .taken(isEmpty: false, at: .seconds(5)),
            step: .write(storing: false),
            state: .writing,
            storeInterval: .seconds(10),
            eventfulBetweenStores: true
        ),
        Transition(
            name: "eventful between stores, nothing eventful: no write, not up to date",
            given: [],
            event: .taken(isEmpty: true, at: .seconds(5)),
            step: .nothing,
            state: .idle,
            storeInterval: .seconds(10),
            eventfulBetweenStores: true
        ),
        Transition(
            name: "eventful between stores, the store interval passed: complete and stored",
            given: [.taken(isEmpty: false, at: .seconds(5)), .answered(logged)],
            event: .taken(isEmpty: true, at: .seconds(10)),
            step: .write(storing: true),
            state: .writing,
            storeInterval: .seconds(10),
            eventfulBetweenStores: true
        ),
        Transition(
            name: "failed, stopping: stays failed",
            given: writing + [.answered(.failure(storeFailed))],
            event: .stopped,
            step: .nothing,
            state: .failed(storeFailed)
        ),
    ]

    /// Applies `event` to `cycle`; the step it returns.
    @discardableResult
    static func apply(_ event: Event, to cycle: inout CheckpointCycle) -> CheckpointCycle.Step {
        switch event {
        case .turn(let at): return cycle.turn(now: start + at)
        case .taken(let isEmpty, let at, let storing):
            return cycle.taken(isEmpty: isEmpty, now: start + at, scope: cycle.scope(now: start + at, storing: storing))
        case .storeNow: return cycle.storeNow()
        case .backlogStored(let result, let at): return cycle.backlogStored(result, now: start + at)
        case .answered(let answer): return cycle.answered(answer)
        case .settle: return cycle.settle()
        case .rewound:
            cycle.rewound()
            return .nothing
        case .stopped:
            cycle.stopped()
            return .nothing
        }
    }

    @Test("each transition", arguments: table)
    func transition(_ row: Transition) {
        var cycle = CheckpointCycle(
            interval: Self.interval,
            storeInterval: row.storeInterval,
            logsEventfulBetweenStores: row.eventfulBetweenStores,
            startedAt: Self.start
        )
        for event in row.given { Self.apply(event, to: &cycle) }
        let step = Self.apply(row.event, to: &cycle)
        #expect(step == row.step, "\(row.name): \(row.event)")
        #expect(cycle.state == row.state, "\(row.name): \(row.event)")
    }

    @Test("a checkpoint is complete when it is stored, and between stores only under exactly-once")
    func scopes() {
        let start = Self.start
        let atLeastOnce = CheckpointCycle(
            interval: Self.interval,
            storeInterval: .seconds(10),
            logsEventfulBetweenStores: true,
            startedAt: start
        )
        #expect(atLeastOnce.scope(now: start + .seconds(5)) == .eventful)
        #expect(atLeastOnce.scope(now: start + .seconds(5), storing: true) == .complete(storing: true))
        #expect(atLeastOnce.scope(now: start + .seconds(10)) == .complete(storing: true))
        let exactlyOnce = CheckpointCycle(interval: Self.interval, storeInterval: .seconds(10), startedAt: start)
        #expect(exactlyOnce.scope(now: start + .seconds(5)) == .complete(storing: false))
        let everyStored = CheckpointCycle(interval: Self.interval, logsEventfulBetweenStores: true, startedAt: start)
        #expect(everyStored.scope(now: start + .seconds(5)) == .complete(storing: true))
    }

    @Test("a refusal is a refusal until the rewind; a failure of the store is not one")
    func refusalUntilRewound() {
        var cycle = CheckpointCycle(interval: Self.interval, startedAt: Self.start)
        for event in Self.writing { Self.apply(event, to: &cycle) }
        #expect(!cycle.canTake, "one at a time")
        Self.apply(.answered(.failure(Self.diskFull)), to: &cycle)
        #expect(cycle.refusal == Self.diskFull)
        #expect(!cycle.canTake, "nothing is taken out of turn either (a revocation's, the last one)")
        cycle.rewound()
        #expect(cycle.refusal == nil)
        #expect(cycle.canTake)
        #expect(
            cycle.turn(now: Self.start + .seconds(10)) == .take,
            "due at once: whether deliveries go through shows early"
        )

        var failing = CheckpointCycle(interval: Self.interval, startedAt: Self.start)
        for event in Self.writing { Self.apply(event, to: &failing) }
        #expect(failing.answered(.failure(Self.storeFailed)) == .fail(Self.storeFailed))
        #expect(failing.refusal == nil, "a failure of the store is final, not a refusal to rewind from")
    }
}
