import GeoCore
import Kafka
import Logging
import PartitionOffsets
import StateStore

/// How partitions' devices change hands with the group's assignments, so that several instances share one
/// group and a partition that moves keeps its state (docs/ARCHITECTURE.md, "Partitions changing hands").
///
/// On each assignment (inside the poll that brings it, from the loop's assign hook, `Worker+Rebalance.swift`):
/// 1. every assigned partition whose changelog partition holds records past the store's copy is restored
///    first (``ChangelogRestore``): another instance wrote since, or this one never held it;
/// 2. the devices of the assigned partitions are loaded from the store when the set changed or anything was
///    restored (the devices of partitions no longer assigned leave memory then);
/// 3. each input partition starts at the later of the store's next offset and the group's committed offset.
///    The group's offset is committed only after the changelog records covering it were delivered, so
///    nothing below it is missing from the restored devices; where it is behind what they reflect, each
///    device skips what its state already holds (``DeviceState/appliedOffsets``). No message is lost, none
///    is applied twice to a device.
///
/// On revocation the worker checkpoints first (the revoke hook), and the store keeps the devices with its
/// changelog offset, so a partition that comes back restores only what changed meanwhile.
struct PartitionHandover {
    /// Restores from the changelog; nil when the worker runs without one.
    let restore: ChangelogRestore?
    /// Where a partition with neither a stored nor a committed offset starts (the consumer's
    /// `auto.offset.reset`); nil to leave it to librdkafka.
    let startWithoutProgress: StartOffset?
    let logger: Logger

    /// What an assignment changes.
    struct Assignment {
        /// The assigned partition numbers' devices must be loaded from the store (the held partitions
        /// changed or records were restored).
        var reloadDevices = false
        /// Where each assigned input partition starts reading.
        var starts: [TopicPartition: Int64] = [:]
        /// How many of them resume from progress (stored or committed), the others starting where the reset
        /// policy points.
        var resuming = 0
        /// Start offsets past what the store holds for the partition (the group's, after another instance
        /// processed it): the store's progress moves up to them, so that a rewind or a group commit never
        /// takes a partition back before them.
        var advanced: [TopicPartition: Int64] = [:]
        var restored = ChangelogRestore.Report()
    }

    /// Takes a new assignment: restores what is behind, and says where to start.
    ///
    /// - Parameters:
    ///   - partitions: the partitions assigned.
    ///   - consumer: the group's consumer, for the changelog's watermarks and the group's committed offsets.
    ///   - held: the input partition numbers whose devices are in memory now.
    ///   - storedOffsets: the next offsets the store holds.
    /// - Returns: what the assignment restored, whether devices must be loaded, and where each partition starts.
    /// - Throws: ``WorkerError`` from the restore.
    func assign(
        _ partitions: [TopicPartition],
        consumer: Consumer,
        held: Set<Int32>,
        storedOffsets: [TopicPartition: Int64]
    ) throws(WorkerError) -> Assignment {
        let numbers = Set(partitions.map(\.partition))
        var assignment = Assignment()
        if let restore { assignment.restored = try restore.restore(numbers, watermarksFrom: consumer) }
        assignment.reloadDevices = numbers != held || !assignment.restored.records.isEmpty
        // Without a changelog the group's offset says nothing about the devices this store holds: the store's
        // own progress is where they stand.
        var committed: [TopicPartition: Int64] = [:]
        var committedKnown = false
        if restore != nil {
            do {
                committed = try consumer.committedOffsets(for: partitions)
                committedKnown = true
            } catch {
                // Safe without: each device skips what it reflects; only dead letters may be sent again.
                logger.warning(
                    "cannot fetch the group's committed offsets; starting from the store's",
                    metadata: [ServiceLogKey.error: "\(error)"]
                )
            }
        }
        assignment.starts = Self.startOffsets(assigned: partitions, stored: storedOffsets, committed: committed)
        assignment.resuming = assignment.starts.count
        for (partition, start) in assignment.starts where start != storedOffsets[partition] {
            assignment.advanced[partition] = start
        }
        // A partition with no progress anywhere starts where the reset policy says, looked up here for all of
        // them at once (not stored: it is no progress). Left to librdkafka, it would ask the group again, then
        // apply the policy after a back-off, which would be most of a new worker's time to its first event.
        let withoutProgress = partitions.filter { assignment.starts[$0] == nil }
        if committedKnown, let startWithoutProgress, !withoutProgress.isEmpty {
            do {
                let offsets = try consumer.offsets(startWithoutProgress, of: withoutProgress)
                assignment.starts.merge(offsets) { current, _ in current }
            } catch {
                logger.debug(
                    "start offsets left to the consumer's reset policy",
                    metadata: [ServiceLogKey.error: "\(error)"]
                )
            }
        }
        return assignment
    }

    /// Where each assigned partition starts: the later of the store's next offset and the group's committed
    /// one; a partition with neither is left out (it starts at the group's reset policy, the earliest).
    static func startOffsets(
        assigned: [TopicPartition],
        stored: [TopicPartition: Int64],
        committed: [TopicPartition: Int64]
    ) -> [TopicPartition: Int64] {
        var starts: [TopicPartition: Int64] = [:]
        for partition in assigned {
            switch (stored[partition], committed[partition]) {
            case (let stored?, let committed?): starts[partition] = max(stored, committed)
            case (let offset?, nil), (nil, let offset?): starts[partition] = offset
            case (nil, nil): break
            }
        }
        return starts
    }
}
