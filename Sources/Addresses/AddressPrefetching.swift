public import GeoCore

/// What the pipeline tells the street addresses' lookups as it applies fixes (with `address.prefetch` on): where a
/// device's fix moved, so that the address of a bucket it entered is asked before anyone asks for it.
///
/// Called on the apply threads for every fix: an implementation compares buckets and hands a new one over, and never
/// waits (no I/O, no lock held for long).
public protocol AddressPrefetching: Sendable {
    /// A device's fix moved from `previous` (none: its first) to `point`.
    func prefetch(from previous: Coordinate?, to point: Coordinate)
}
