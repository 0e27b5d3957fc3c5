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
    private let readingCount = Mutex(0)

    var now: ContinuousClock.Instant {
        readingCount.withLock { $0 += 1 }
        return start + advanced.withLock { $0 }
    }

    /// How many times the clock has been read: the worker's loop reads it at every turn, where it decides whether a
    /// checkpoint is due or a back-off is over, so a test that sees it read again knows those decisions were made.
    var readings: Int { readingCount.withLock { $0 } }

    func sleep(for duration: Duration) {
        Thread.sleep(forTimeInterval: 0.001)
    }

    /// Moves the clock forward.
    func advance(by duration: Duration) {
        advanced.withLock { $0 += duration }
    }
}
