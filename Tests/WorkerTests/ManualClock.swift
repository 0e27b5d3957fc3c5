import Foundation
import Synchronization
import Worker

/// A clock a test moves by hand: the worker's checkpoints fall due and its back-offs end when the test says, not when
/// time has passed.
///
/// Its sleeps are a millisecond of real time, so that a loop waiting on it neither spins nor waits for anything but the
/// test.
final class ManualClock: WorkerClock {
    private let start = ContinuousClock.now
    private let advanced = Mutex<Duration>(.zero)

    var now: ContinuousClock.Instant { start + advanced.withLock { $0 } }

    func sleep(for duration: Duration) {
        Thread.sleep(forTimeInterval: 0.001)
    }

    /// Moves the clock forward.
    func advance(by duration: Duration) {
        advanced.withLock { $0 += duration }
    }
}
