import Synchronization

/// What the apply threads have processed since the worker started: readable from any thread at any time.
///
/// Each shard adds what its processor counted when it is done with its part of a round, so a reading never sees a
/// message half counted (its position counted, its events not yet), and what a shard counted outlives the shard when a
/// rebalance or a rewind replaces it (metrics only grow).
final class ProcessingTally: Sendable {
    private let total = Mutex(InputProcessor.Counts())

    /// Adds what a processor counted since it last gave its counts.
    func add(_ counts: borrowing InputProcessor.Counts) {
        total.withLock { $0 += counts }
    }

    /// What has been processed so far (messages applied again after a rewind count again).
    var counters: ProcessingCounters { total.withLock { $0.counters } }
}
