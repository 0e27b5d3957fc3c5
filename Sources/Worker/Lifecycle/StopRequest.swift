import Foundation
import Synchronization

/// The stop asked of the worker (``Worker/stop()``): the loop reads it at every turn, and it ends a wait on the
/// ``WorkerClock`` (a back-off) at once, so that no wait polls for it.
///
/// Safe from any thread: a signal handler's task asks, the loop's thread waits.
public final class StopRequest: @unchecked Sendable {
    // @unchecked: `asked` is atomic; `condition` guards the waits' wake-ups.
    private let asked = Atomic<Bool>(false)
    private let condition = NSCondition()

    init() {}

    /// Whether the stop was asked for.
    public var isAsked: Bool { asked.load(ordering: .acquiring) }

    /// Asks for the stop and ends the waits in progress.
    func ask() {
        asked.store(true, ordering: .releasing)
        wake()
    }

    /// Blocks the calling thread until the stop is asked for or `isOver` says the wait is done, asked again whenever
    /// ``wake()`` is called; with a `timeout`, for at most that long.
    ///
    /// `isOver` is asked with the wait's lock held: whatever makes it true calls ``wake()`` after, and is not missed.
    public func wait(upTo timeout: Duration? = nil, until isOver: () -> Bool = { false }) {
        let deadline = timeout.map { Date(timeIntervalSinceNow: $0.seconds) }
        condition.lock()
        defer { condition.unlock() }
        while !isAsked && !isOver() {
            if let deadline {
                guard condition.wait(until: deadline) else { return }
            } else {
                condition.wait()
            }
        }
    }

    /// Makes the waits in progress ask their `isOver` again (a test's clock moved forward).
    public func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}

extension Duration {
    /// In seconds, for Foundation's time intervals.
    fileprivate var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
