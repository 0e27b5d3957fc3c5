/// Settings of a ``Consumer``.
///
/// Typed settings cover what geoworker relies on; `properties` passes any other librdkafka property through (SASL/SSL,
/// tuning), see librdkafka's CONFIGURATION.md.
///
/// Offsets are never stored or committed behind the caller's back (`enable.auto.offset.store` and
/// `enable.auto.commit` are off): a stream worker stores an offset only once the message's effects are
/// durable, then commits. `properties` can turn either back on.
public struct ConsumerConfiguration: Sendable {
    /// What to do in a partition that has no committed offset (`auto.offset.reset`).
    public enum OffsetReset: String, Sendable {
        /// Read the partition from its oldest message: nothing produced before the group existed is missed.
        case earliest
        /// Read only what is produced from now on.
        case latest
    }

    /// Initial brokers, as `host:port[,host:port…]`.
    public var bootstrapServers: String
    /// The consumer group (`group.id`).
    ///
    /// Members of one group share the partitions between them.
    public var groupId: String
    /// Shown in broker logs and metrics.
    ///
    /// Default: `geoworker`.
    public var clientId: String
    /// How long the group waits for a member that stopped heartbeating before giving its partitions to others
    /// (`session.timeout.ms`).
    ///
    /// Default: 45 s.
    public var sessionTimeout: Duration
    /// How often the member tells the group it is alive (`heartbeat.interval.ms`); keep it well under a third of
    /// `sessionTimeout`.
    ///
    /// Default: 3 s.
    public var heartbeatInterval: Duration
    /// Where to start in a partition without a committed offset.
    ///
    /// Default: `.earliest`.
    public var offsetReset: OffsetReset
    /// Report when an assigned partition has been read to its end (`enable.partition.eof`), which
    /// ``Consumer/hasReachedEndOfAssignment`` relies on.
    ///
    /// Default: true.
    public var reportsEndOfPartition: Bool
    /// Raw librdkafka properties, applied after the typed settings so they can override them.
    ///
    /// Values are never logged: they may hold credentials.
    public var properties: [String: String]

    public init(
        bootstrapServers: String,
        groupId: String,
        clientId: String = "geoworker",
        sessionTimeout: Duration = .seconds(45),
        heartbeatInterval: Duration = .seconds(3),
        offsetReset: OffsetReset = .earliest,
        reportsEndOfPartition: Bool = true,
        properties: [String: String] = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.groupId = groupId
        self.clientId = clientId
        self.sessionTimeout = sessionTimeout
        self.heartbeatInterval = heartbeatInterval
        self.offsetReset = offsetReset
        self.reportsEndOfPartition = reportsEndOfPartition
        self.properties = properties
    }

    /// The session timeout in effect: a raw `session.timeout.ms` property wins over ``sessionTimeout``.
    var effectiveSessionTimeout: Duration {
        properties["session.timeout.ms"].flatMap { Int($0) }.map { .milliseconds($0) } ?? sessionTimeout
    }

    /// The librdkafka properties these settings stand for, in the order they are applied.
    var librdkafkaProperties: [(String, String)] {
        var result: [(String, String)] = [
            ("bootstrap.servers", bootstrapServers),
            ("group.id", groupId),
            ("client.id", clientId),
            ("session.timeout.ms", String(sessionTimeout.wholeMilliseconds)),
            ("heartbeat.interval.ms", String(heartbeatInterval.wholeMilliseconds)),
            ("auto.offset.reset", offsetReset.rawValue),
            ("enable.partition.eof", String(reportsEndOfPartition)),
            ("enable.auto.offset.store", "false"),
            ("enable.auto.commit", "false"),
        ]
        result += properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return result
    }
}
