import Synchronization
import Worker

/// A clock a test moves by hand: the worker's checkpoints fall due and its back-offs end when the test says, not when
/// time has passed.
///
/// A sleep on it blocks until ``advance(by:)`` passes its deadline or the worker's stop is asked for: a loop waiting on
/// it neither spins nor waits for anything but the test.
final class ManualClock: WorkerClock {
    private let start = ContinuousClock.now
    private let state = Mutex(State())

    private struct State {
        var advanced: Duration = .zero
        var readings = 0
        /// The stops of the sleeps in progress, woken when the clock moves.
        var sleepers: [StopRequest] = []
    }

    var now: ContinuousClock.Instant {
        state.withLock { state in
            state.readings += 1
            return start + state.advanced
        }
    }

    /// How many times the clock has been read: the worker's loop reads it at every turn, where it decides whether a
    /// checkpoint is due, so a test that sees it read again knows those decisions were made.
    var readings: Int { state.withLock { $0.readings } }

    /// Whether a sleep is in progress: the loop waits out a back-off on this clock.
    var hasSleeper: Bool { state.withLock { !$0.sleepers.isEmpty } }

    func sleep(until deadline: ContinuousClock.Instant, unless stop: StopRequest) {
        // Registered before the first look at the time: a move after that look wakes this sleep.
        state.withLock { $0.sleepers.append(stop) }
        defer {
            state.withLock { state in
                if let index = state.sleepers.firstIndex(where: { $0 === stop }) { state.sleepers.remove(at: index) }
            }
        }
        stop.wait(until: { state.withLock { start + $0.advanced } >= deadline })
    }

    /// Moves the clock forward, waking the sleeps whose deadline it passes.
    func advance(by duration: Duration) {
        let sleepers = state.withLock { state in
            state.advanced += duration
            return state.sleepers
        }
        for stop in sleepers { stop.wake() }
    }
}
