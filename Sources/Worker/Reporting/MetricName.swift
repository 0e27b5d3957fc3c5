/// The name of every metric the worker exposes on `/metrics`, in one place: the code that records them, the
/// operations server's bucket settings and the tests all use these.
public enum MetricName {
    /// Positions applied (a rewind's replays count again).
    public static let positions = "geoworker_positions_consumed_total"
    /// Commands applied.
    public static let commands = "geoworker_commands_consumed_total"
    /// Events produced, by CloudEvents `type`.
    public static let events = "geoworker_events_produced_total"
    /// Messages sent to the dead-letter topic, by `reason`.
    public static let deadLettered = "geoworker_dead_lettered_total"
    /// Positions older than the newest applied for their device.
    public static let stale = "geoworker_stale_positions_total"
    /// Positions as old as the newest applied for their device.
    public static let duplicates = "geoworker_duplicate_positions_total"
    /// Messages whose Kafka key is not their device id.
    public static let keyNotDeviceId = "geoworker_key_not_device_id_total"
    /// Devices announced silent by the wall clock, for a partition that received nothing (``StreamClock``).
    public static let silencesByWallClock = "geoworker_silences_by_wall_clock_total"
    /// Messages skipped because their device's state already reflected them.
    public static let alreadyApplied = "geoworker_already_applied_total"
    /// How often a partition pair went on without a side known to hold more, its wait at the bound: events that
    /// may then depend on fetch timing.
    public static let mergeLaggingWaitsGivenUp = "geoworker_merge_lagging_waits_given_up_total"
    /// Breaches of an invariant the worker checks on itself, by `invariant`: each a defect to report, logged with
    /// what broke it (docs/ARCHITECTURE.md, "Invariants checked at run time").
    public static let invariantViolations = "geoworker_invariant_violations_total"
    /// From a poll's return until its messages were applied and sent.
    public static let batchDuration = "geoworker_batch_duration_seconds"
    /// Per input partition (`topic`, `partition`): its high watermark less the stored next offset.
    public static let lag = "geoworker_consumer_lag"
    /// Devices held.
    public static let devices = "geoworker_devices"
    /// Tracked pins held.
    public static let pins = "geoworker_pins"
    /// Records the broker refused for good, by `topic` and librdkafka `error` name.
    public static let deliveryFailures = "geoworker_delivery_failures_total"
    /// Checkpoints the disk refused (full, or an I/O error): each rewinds and backs off.
    public static let stateWriteFailures = "geoworker_state_write_failures_total"
    /// Assignments lost: the group gave this instance's partitions to others while it was gone past its session.
    public static let assignmentsLost = "geoworker_assignments_lost_total"
    /// Geofences in force in the fleet's catalog (`topics.geofences`), as this instance has read it.
    public static let catalogGeofences = "geoworker_catalog_geofences"
    /// Versions of catalog geofences kept: the current ones, and those replaced or deleted within
    /// `catalog.versionRetentionSeconds` of the newest position released.
    public static let catalogVersions = "geoworker_catalog_versions"
    /// Catalog records read, by `outcome`: `applied` (a geofence put or deleted), `refused` (a record that cannot be
    /// used, logged with its reason).
    public static let catalogRecords = "geoworker_catalog_records_total"
    /// Catalog records stamped before positions this instance had already applied: in force from their time for what
    /// came after them, not for those.
    public static let catalogLateRecords = "geoworker_catalog_late_records_total"
    /// How often the merge's wait for the catalog reached its bound and positions went on without it.
    public static let catalogWaitsGivenUp = "geoworker_catalog_waits_given_up_total"
    /// How long reading the whole catalog took at the start.
    public static let catalogLoadSeconds = "geoworker_catalog_load_seconds"
    /// Changelog records restored, by changelog `partition`.
    public static let changelogRestored = "geoworker_changelog_restored_records_total"
    public static let changelogRestoreReplacedStates = "geoworker_changelog_restore_replaced_states_total"
    public static let changelogRestoreKeptStates = "geoworker_changelog_restore_kept_states_total"
    /// Changelog records left to restore, by changelog `partition`.
    public static let changelogRestoreRemaining = "geoworker_changelog_restore_remaining_records"
    /// Events a live watcher of the event stream missed because it read too slowly.
    public static let eventStreamMissed = "geoworker_event_stream_missed_total"
    /// Watchers of the live event stream connected now.
    public static let eventStreamClients = "geoworker_event_stream_clients"
    /// How long one checkpoint took to write: its deliveries awaited, its changelog records sent, SQLite committed.
    public static let checkpointDuration = "geoworker_checkpoint_duration_seconds"
    /// When the store last held everything applied (Unix seconds): a checkpoint written, or nothing left to write.
    public static let checkpointUpToDate = "geoworker_checkpoint_up_to_date_timestamp_seconds"
    /// 1 while `/ready` answers 200 (consuming), else 0.
    public static let ready = "geoworker_ready"
    /// 1 while `/health` answers 200, else 0 (failed, or backing off from a refused delivery or write).
    public static let healthy = "geoworker_healthy"
}
