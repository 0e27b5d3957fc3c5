import AddressLookups
import Synchronization

/// The lookups' time, moved by the test: a sleep returns when ``advance(by:)`` passes its deadline (or its task is
/// cancelled), never because real time went by.
final class ManualLookupClock: LookupClock {
    private let start = ContinuousClock.now
    private let state = Mutex(State())

    private struct State {
        var advanced: Duration = .zero
        var nextSleeper = 0
        var sleepers: [Int: (deadline: ContinuousClock.Instant, continuation: CheckedContinuation<Void, any Error>)] =
            [:]
        /// Sleepers cancelled before they were registered.
        var cancelled: Set<Int> = []
    }

    var now: ContinuousClock.Instant { start + state.withLock { $0.advanced } }

    func sleep(until deadline: ContinuousClock.Instant) async throws {
        let number = state.withLock { state in
            defer { state.nextSleeper += 1 }
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(number) != nil { return .failure(CancellationError()) }
                    if start + state.advanced >= deadline { return .success(()) }
                    state.sleepers[number] = (deadline, continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                let sleeper = state.sleepers.removeValue(forKey: number)
                if sleeper == nil { state.cancelled.insert(number) }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes the sleepers whose deadline it passed.
    func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.advanced += duration
            let now = start + state.advanced
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for number in due.keys { state.sleepers.removeValue(forKey: number) }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }
}
