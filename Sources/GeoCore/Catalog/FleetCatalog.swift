/// The fleet's catalog as the worker holds it: one instance shared by the loop, which keeps it current, and the
/// apply threads' trackers, which read it.
///
/// A reference, so that a change is made in place (a value copied into each tracker would copy a million geofences at
/// the first change). The rule that makes it safe without a lock is the loop's: it changes ``geofences`` only while no
/// apply thread runs (between rounds, after `waitUntilApplied()`), and the threads' start and end of a round are the
/// synchronisation points that publish each change to them.
public final class FleetCatalog: @unchecked Sendable {
    // @unchecked: written only while no reader runs (above).
    public var geofences: GeofenceCatalog

    public init(_ geofences: GeofenceCatalog = GeofenceCatalog()) {
        self.geofences = geofences
    }
}
