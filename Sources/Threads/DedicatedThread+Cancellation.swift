import Foundation
import Synchronization

/// A blocking call that its caller may stop waiting for.
///
/// A blocking call cannot be cancelled: it can only be asked to finish sooner. When it does not (a C library that
/// waits for a server that went away), a caller that must be done in time, a process's stop, has no choice but to
/// stop waiting and leave the call to finish on its own thread.
extension DedicatedThread {
    /// Runs `body` on a short-lived thread of its own and returns its result, as ``runOnce(name:_:)`` does, unless the
    /// awaiting task is cancelled: then `onCancel` runs (it asks `body` to finish), and the wait lasts at most `grace`
    /// longer.
    ///
    /// - Returns: `body`'s result; nil when it had not returned `grace` after the cancellation. Its thread then goes on
    ///   running it alone, and ends when it returns (or with the process).
    public static func runOnce<T: Sendable, Failure: Error>(
        name: String,
        onCancel: @escaping @Sendable () -> Void,
        abandoningAfter grace: Duration,
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T? {
        let thread = DedicatedThread(name: name)
        let outcome = FirstOutcome<Result<T, Failure>?>()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                outcome.await(continuation)
                thread.execute {
                    do throws(Failure) {
                        outcome.settle(.success(try body()))
                    } catch {
                        outcome.settle(.failure(error))
                    }
                    // Its only job done, the thread ends; nobody may be waiting for it any more.
                    thread.stop()
                }
            }
        } onCancel: {
            onCancel()
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(grace / .milliseconds(1)))) {
                outcome.settle(nil)
            }
        }
        return try result?.get()
    }
}

/// The first of several answers, handed to the one task that waits for it; later answers are dropped.
private final class FirstOutcome<Value: Sendable>: Sendable {
    private enum State {
        case open(waiting: CheckedContinuation<Value, Never>?)
        case settled(Value)
    }

    private let state = Mutex<State>(.open(waiting: nil))

    /// Hands the outcome to `continuation`: at once when it is settled, else when it is.
    func await(_ continuation: CheckedContinuation<Value, Never>) {
        let settled: Value? = state.withLock { state in
            switch state {
            case .open:
                state = .open(waiting: continuation)
                return nil
            case .settled(let value):
                return value
            }
        }
        if let settled { continuation.resume(returning: settled) }
    }

    /// Settles the outcome with `value`, unless it is settled already.
    func settle(_ value: Value) {
        let waiting: CheckedContinuation<Value, Never>? = state.withLock { state in
            guard case .open(let waiting) = state else { return nil }
            state = .settled(value)
            return waiting
        }
        waiting?.resume(returning: value)
    }
}
