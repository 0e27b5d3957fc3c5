public import Logging

/// The service's log metadata keys, in the project's one style (lower case, words joined by `_`, as the Kafka
/// module's `KafkaLogKey`), so that a log pipeline can index them.
public enum ServiceLogKey {
    public static let brokers: Logger.Metadata.Key = "brokers"
    public static let group: Logger.Metadata.Key = "group"
    public static let positionsTopic: Logger.Metadata.Key = "positions_topic"
    public static let commandsTopic: Logger.Metadata.Key = "commands_topic"
    public static let eventsTopic: Logger.Metadata.Key = "events_topic"
    public static let topic: Logger.Metadata.Key = "topic"
    public static let partition: Logger.Metadata.Key = "partition"
    public static let replicationFactor: Logger.Metadata.Key = "replication_factor"
    public static let devices: Logger.Metadata.Key = "devices"
    public static let applyThreads: Logger.Metadata.Key = "apply_threads"
    public static let positions: Logger.Metadata.Key = "positions"
    public static let commands: Logger.Metadata.Key = "commands"
    public static let records: Logger.Metadata.Key = "records"
    public static let remaining: Logger.Metadata.Key = "remaining"
    public static let restoredRecords: Logger.Metadata.Key = "restored_records"
    /// Stored device states a restore replaced with the changelog's newer ones.
    public static let replaced: Logger.Metadata.Key = "replaced"
    /// Stored device states a restore kept over an older record.
    public static let kept: Logger.Metadata.Key = "kept"
    public static let resuming: Logger.Metadata.Key = "resuming"
    public static let lost: Logger.Metadata.Key = "lost"
    public static let invariant: Logger.Metadata.Key = "invariant"
    public static let offset: Logger.Metadata.Key = "offset"
    public static let device: Logger.Metadata.Key = "device"
    public static let appliedOffsets: Logger.Metadata.Key = "applied_offsets"
    public static let storedOffsets: Logger.Metadata.Key = "stored_offsets"
    public static let startOffsets: Logger.Metadata.Key = "start_offsets"
    /// Where an aborted transaction's records landed: `topic[partition]@first..<next`, comma-separated.
    public static let abortedOffsets: Logger.Metadata.Key = "aborted_offsets"
    public static let file: Logger.Metadata.Key = "file"
    public static let movedTo: Logger.Metadata.Key = "moved_to"
    public static let elapsed: Logger.Metadata.Key = "elapsed"
    public static let error: Logger.Metadata.Key = "error"
    /// Why an input record cannot be used.
    public static let reason: Logger.Metadata.Key = "reason"
    /// Geofences in force in the fleet's catalog.
    public static let geofences: Logger.Metadata.Key = "geofences"
    public static let code: Logger.Metadata.Key = "code"
    public static let refusals: Logger.Metadata.Key = "refusals"
    public static let retryIn: Logger.Metadata.Key = "retry_in"
    public static let port: Logger.Metadata.Key = "port"
    /// An instance of the group, by its name in the instances topic.
    public static let instance: Logger.Metadata.Key = "instance"
    /// Where an instance's operations port answers.
    public static let address: Logger.Metadata.Key = "address"
    public static let allocator: Logger.Metadata.Key = "allocator"
    public static let deadLettered: Logger.Metadata.Key = "dead_lettered"
    public static let reasons: Logger.Metadata.Key = "reasons"
    /// Where a message was read: `topic:partition:offset`.
    public static let origin: Logger.Metadata.Key = "origin"
}
