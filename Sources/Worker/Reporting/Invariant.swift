/// A rule the worker checks on itself while it runs.
///
/// Its tests cannot reach every ordering of fetches, rebalances and pauses a fleet meets, so a breach is logged (error
/// level, with the device, partition and offsets that broke it) and counted in
/// `geoworker_invariant_violations_total{invariant}`: the next defect of its kind shows in production, not only in a
/// test. None of them stops the worker; each is a defect to report.
enum Invariant: String, CaseIterable {
    /// A pair's records leave the merge in timestamp order, except where a wait for an empty side ran out (counted
    /// apart): no record that was in its partition, as the consumer knew, comes after a record of the other side
    /// stamped later.
    case mergeOrder = "merge_order"
    /// Within one assignment of a partition, and between rewinds, its records are read once each, in offset order.
    case readOrder = "read_order"
    /// Two states of one device met in a restore are ordered by their applied offsets (one reflects all the other
    /// does): one device's messages are applied in one order wherever it is processed.
    case restoreOrder = "restore_order"
}
