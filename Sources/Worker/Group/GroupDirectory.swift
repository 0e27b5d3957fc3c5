import Kafka
import Synchronization

/// The instances of this instance's group and the input partitions each holds, as read from the instances topic by
/// ``GroupPresence``: what the operations port asks to forward a device card to its holder and to gather the nearby
/// answer and the map from every instance.
///
/// Written by the presence's consumer, read by the HTTP handlers: thread-safe.
public final class GroupDirectory: Sendable {
    /// An instance that holds partitions now.
    public struct Member: Sendable, Hashable {
        public let instance: String
        /// Where its operations port answers.
        public let address: String
        /// The partitions it holds now, ascending.
        public let partitions: [Int32]
    }

    /// This instance's own name in the directory.
    public let instance: String
    private let table = Mutex(DirectoryTable())

    public init(instance: String) {
        self.instance = instance
    }

    func apply(_ advert: InstanceAdvert) {
        table.withLock { $0.apply(advert) }
    }

    func forget(_ instance: String) {
        table.withLock { $0.forget(instance) }
    }

    /// Who holds `partition` now; nil while it moves between instances, or before any instance said.
    public func holder(of partition: Int32) -> Member? {
        table.withLock { table in
            table.holder(of: partition).map {
                Member(instance: $0.instance, address: $0.address, partitions: [partition])
            }
        }
    }

    /// Every instance that holds a partition now, in name order; and the partitions that nobody holds (moving).
    public func members() -> (holding: [Member], moving: [Int32]) {
        table.withLock { table in
            (
                table.holders().map {
                    Member(instance: $0.advert.instance, address: $0.advert.address, partitions: $0.holds)
                },
                table.unheld()
            )
        }
    }

    /// The input partitions a device's messages may be in, by the partitioners producers commonly use (librdkafka's
    /// and the Java client's, which differ): one or two; none before any instance said how many partitions there are.
    public func partitions(ofDevice deviceId: String) -> [Int32] {
        guard let count = table.withLock({ $0.partitionCount }) else { return [] }
        let key = Array(deviceId.utf8)
        let native = KeyPartitioner.librdkafka.partition(of: key, partitionCount: count)
        let java = KeyPartitioner.java.partition(of: key, partitionCount: count)
        return native == java ? [native] : [native, java]
    }
}
