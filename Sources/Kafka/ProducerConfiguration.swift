/// Settings of a ``Producer``.
///
/// Typed settings cover what geoworker relies on; `properties` passes any other librdkafka property through (SASL/SSL,
/// tuning), see librdkafka's CONFIGURATION.md.
public struct ProducerConfiguration: Sendable {
    /// Initial brokers, as `host:port[,host:port…]`.
    public var bootstrapServers: String
    /// Shown in broker logs and metrics.
    ///
    /// Default: `geoworker`.
    public var clientId: String
    /// Idempotent producer (`enable.idempotence`, which implies `acks=all`): no duplicates from internal retries and
    /// per-partition order kept.
    ///
    /// Default: true.
    public var isIdempotent: Bool
    /// How long librdkafka waits to fill a batch before sending it (`linger.ms`).
    ///
    /// Default: 5 ms.
    public var linger: Duration
    /// How long a message may take, retries included, before its delivery report says it failed (`message.timeout.ms`).
    ///
    /// Default: 300 s.
    public var deliveryTimeout: Duration
    /// Makes the producer transactional (`transactional.id`): records are sent only inside transactions
    /// (``Producer/beginTransaction()``), and a newer producer with the same id fences this one.
    ///
    /// Default: nil, no transactions.
    public var transactionalId: String?
    /// Raw librdkafka properties, applied after the typed settings so they can override them.
    ///
    /// Values are never logged: they may hold credentials.
    public var properties: [String: String]

    public init(
        bootstrapServers: String,
        clientId: String = "geoworker",
        isIdempotent: Bool = true,
        linger: Duration = .milliseconds(5),
        deliveryTimeout: Duration = .seconds(300),
        transactionalId: String? = nil,
        properties: [String: String] = [:]
    ) {
        self.bootstrapServers = bootstrapServers
        self.clientId = clientId
        self.isIdempotent = isIdempotent
        self.linger = linger
        self.deliveryTimeout = deliveryTimeout
        self.transactionalId = transactionalId
        self.properties = properties
    }

    /// The librdkafka properties these settings stand for, in the order they are applied.
    var librdkafkaProperties: [(String, String)] {
        var result: [(String, String)] = [
            ("bootstrap.servers", bootstrapServers),
            ("client.id", clientId),
            ("enable.idempotence", String(isIdempotent)),
            ("linger.ms", String(linger.wholeMilliseconds)),
            ("message.timeout.ms", String(deliveryTimeout.wholeMilliseconds)),
        ]
        if isIdempotent { result.append(("acks", "all")) }
        if let transactionalId { result.append(("transactional.id", transactionalId)) }
        result += properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        return result
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded down, as librdkafka's `*.ms` settings take it.
    package var wholeMilliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
