/// What the worker promises the readers of its topics across crashes, restarts and rebalances (README, "Processing
/// guarantee").
public enum ProcessingGuarantee: String, Hashable, Sendable, CaseIterable {
    /// Events go out as their positions are applied; after a crash the worker sends again what followed its last
    /// checkpoint, with the same ids, so a reader deduplicates by `id`.
    case atLeastOnce = "at-least-once"
    /// Each checkpoint is one Kafka transaction: the events, dead letters and changelog records since the last one and
    /// the input offsets they cover, committed together or not at all. A `read_committed` reader sees every event
    /// once, at the commit (at most `checkpointIntervalMs` after its position).
    case exactlyOnce = "exactly-once"

    /// The `transactional.id` of an instance under exactly-once: the same for every run of one instance, so that a
    /// restart fences its predecessor's producer and aborts the transaction it left open; nil under at-least-once.
    ///
    /// Derived from the group and the static membership's instance id, which the group already requires to be unique
    /// and stable per instance.
    func transactionalId(groupId: String, groupInstanceId: String?) -> String? {
        guard self == .exactlyOnce, let groupInstanceId else { return nil }
        return "geoworker-\(groupId)-\(groupInstanceId)"
    }

    /// Refuses the settings exactly-once cannot keep its promise with.
    ///
    /// - Throws: ``WorkerError`` `configuration`, saying what is missing and why.
    func check(groupInstanceId: String?, changelogEnabled: Bool) throws(WorkerError) {
        guard self == .exactlyOnce else { return }
        guard let groupInstanceId, !groupInstanceId.isEmpty else {
            throw WorkerError(
                .configuration,
                """
                processingGuarantee exactly-once needs groupInstanceId (--group-instance-id): the transactional id is \
                made from it, so that a restart of this instance aborts what it left open; a random one would leave \
                an open transaction blocking every read_committed reader until the broker's transaction timeout
                """
            )
        }
        guard changelogEnabled else {
            throw WorkerError(
                .configuration,
                """
                processingGuarantee exactly-once needs the changelog (remove --no-changelog): the devices are \
                restored from it to the last committed transaction
                """
            )
        }
    }
}
