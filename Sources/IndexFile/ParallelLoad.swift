import Dispatch

/// Two independent parts of a load done at once, each on a core of its own where there is one.
///
/// A load is mostly copying tables out of the page cache and arithmetic over them, which one core does alone:
/// `geoworker geocode` over a file spends a fifth of its time loading the country and places indexes, and the
/// places index's polygons and its places are independent parts.
package enum ParallelLoad {
    /// Runs `first` and `second` at once; returns both results, or throws the first part's error, else the
    /// second's.
    package static func run<First, Second, Failure: Error>(
        _ first: () throws(Failure) -> First,
        _ second: () throws(Failure) -> Second
    ) throws(Failure) -> (First, Second) {
        var firstResult: Result<First, Failure>?
        var secondResult: Result<Second, Failure>?
        func runFirst() { firstResult = Result { () throws(Failure) in try first() } }
        func runSecond() { secondResult = Result { () throws(Failure) in try second() } }
        withoutActuallyEscaping(runFirst) { firstPart in
            withoutActuallyEscaping(runSecond) { secondPart in
                let parts = Parts(first: firstPart, second: secondPart)
                DispatchQueue.concurrentPerform(iterations: 2) { part in parts.run(part) }
            }
        }
        return (try firstResult!.get(), try secondResult!.get())
    }

    /// The two parts, handed to the threads that run them.
    private struct Parts: @unchecked Sendable {
        // @unchecked: each part writes only its own result, and `concurrentPerform` returns, with both results
        // read after it, only when both parts are done: nothing is shared while they run, nor kept after.
        let first: () -> Void
        let second: () -> Void

        func run(_ part: Int) {
            if part == 0 { first() } else { second() }
        }
    }
}
