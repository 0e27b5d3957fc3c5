import Synchronization

/// The input partitions the group has assigned this instance and it has taken (restored, devices loaded), for
/// ``GroupPresence`` to tell the group: set by the loop's rebalance hooks, read from any thread.
public final class AssignedPartitions: Sendable {
    /// The partitions and a number that grows at each change, so that a reader tells a change it has not told yet.
    public struct Snapshot: Sendable, Equatable {
        public var partitions: Set<Int32> = []
        public var version = 0
        /// The input topics' partition count, once the topics were checked.
        public var partitionCount: Int?
    }

    private let state = Mutex(Snapshot())

    public init() {}

    public var snapshot: Snapshot { state.withLock { $0 } }

    /// The assignment took these partitions (after they were restored and their devices loaded).
    func took(_ partitions: some Sequence<Int32>, of partitionCount: Int) {
        state.withLock { snapshot in
            snapshot.partitions.formUnion(partitions)
            snapshot.partitionCount = partitionCount
            snapshot.version += 1
        }
    }

    /// These partitions were revoked or lost.
    func gave(_ partitions: some Sequence<Int32>) {
        state.withLock { snapshot in
            snapshot.partitions.subtract(partitions)
            snapshot.version += 1
        }
    }
}
