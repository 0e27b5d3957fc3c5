import CRdKafka
public import Logging
import Synchronization

/// An in-process Kafka cluster: librdkafka's mock brokers, serving the real Kafka protocol on loopback TCP.
///
/// For the demo and tests. Any Kafka client can connect to ``bootstrapServers`` (kcat, other languages'
/// clients). Limits: each partition keeps only about 5 MB (older messages are dropped), and a new
/// consumer group waits about 3 s before its first assignment.
///
/// `@unchecked Sendable`: the cluster pointer is owned here and librdkafka's mock API locks internally.
public final class MockCluster: @unchecked Sendable {
    /// The client librdkafka runs the mock brokers in; it lives as long as the cluster.
    private let host: KafkaHandle
    private let cluster: OpaquePointer

    /// Where clients connect: `127.0.0.1:port,…`, one address per broker.
    public let bootstrapServers: String
    /// Broker ids run from 1 to `brokerCount`.
    public let brokerCount: Int
    /// What ``takeBrokerDown(_:)`` needs to know of the brokers to hold a port: which are down (their ports have no
    /// listener to answer, and librdkafka binds nothing again for them), and how long each delays its answers.
    private let brokerConditions = Mutex(BrokerConditions())

    private struct BrokerConditions {
        var down: Set<Int32> = []
        var answerDelays: [Int32: Duration] = [:]
    }

    /// Starts `brokers` mock brokers on loopback ports chosen by the system.
    ///
    /// - Throws: ``KafkaError`` when librdkafka cannot start them.
    public init(brokers: Int = 1, logger: Logger = Logger(label: "geoworker.kafka.mock")) throws(KafkaError) {
        precondition(brokers > 0, "a cluster needs at least one broker")
        // The host client connects nowhere; it only hosts the brokers' threads. Its own notices (no
        // bootstrap servers) are not worth an operator's attention. The brokers' connections take its socket
        // settings: without Nagle's algorithm, as a Kafka broker's are (it sets TCP_NODELAY). With it, an
        // answer written while the one before was not yet acknowledged waits for the client's delayed
        // acknowledgement (40 ms on Linux), which a real broker's clients never see.
        host = try KafkaHandle(
            kind: RD_KAFKA_PRODUCER,
            properties: [("log_level", "3"), ("socket.nagle.disable", "true")],
            context: ClientContext(logger: logger)
        )
        guard let cluster = rd_kafka_mock_cluster_new(host.pointer, Int32(brokers)) else {
            throw KafkaError(code: .invalidState, message: "librdkafka could not start a mock cluster")
        }
        self.cluster = cluster
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
        self.brokerCount = brokers
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
    }

    /// Creates `name` with `partitions` partitions.
    ///
    /// - Throws: ``KafkaError`` when the mock refuses (for example a replication factor above the broker count).
    public func createTopic(_ name: String, partitions: Int, replicationFactor: Int = 1) throws(KafkaError) {
        let err = rd_kafka_mock_topic_create(cluster, name, Int32(partitions), Int32(replicationFactor))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "create topic '\(name)'") }
    }

    /// Takes broker `id` down: its connections close and it refuses new ones, as if the process died.
    ///
    /// What it stored is kept for when it comes back.
    ///
    /// librdkafka 2.0.2 closes the broker's listener and binds its port again at once (to keep the port), and aborts
    /// the process when that bind fails: a connection the broker accepted is held meanwhile, so that the port stays
    /// owned through that instant (``MockBrokerAnchor``).
    ///
    /// - Throws: ``KafkaError`` when the broker would not accept that connection: a failed test rather than a test
    ///   process that librdkafka aborts with every other test in it.
    public func takeBrokerDown(_ id: Int32) throws(KafkaError) {
        let (wasDown, answerDelay) = brokerConditions.withLock { ($0.down.contains(id), $0.answerDelays[id] ?? .zero) }
        var anchor: MockBrokerAnchor?
        if !wasDown, let port = port(of: id) {
            anchor = MockBrokerAnchor.holding(port: port, answerDelay: answerDelay)
            guard anchor != nil else {
                throw KafkaError(
                    code: .invalidState,
                    message: "mock broker \(id) answered no connection to hold its port \(port) while it goes down"
                )
            }
        }
        let err = withExtendedLifetime(anchor) { rd_kafka_mock_broker_set_down(cluster, id) }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "take broker \(id) down") }
        _ = brokerConditions.withLock { $0.down.insert(id) }
    }

    /// The loopback port broker `id` listens on: `bootstrapServers` lists the brokers in the order of their ids.
    private func port(of id: Int32) -> UInt16? {
        let addresses = bootstrapServers.split(separator: ",")
        guard id >= 1, Int(id) <= addresses.count, let port = addresses[Int(id) - 1].split(separator: ":").last else {
            return nil
        }
        return UInt16(port)
    }

    /// Makes broker `id` the leader of one partition of `topic`: its fetches and produces go to that broker.
    public func setLeader(of topic: String, partition: Int32, to id: Int32) throws(KafkaError) {
        let err = rd_kafka_mock_partition_set_leader(cluster, topic, partition, id)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            throw KafkaError(err, "set the leader of \(topic)[\(partition)]")
        }
    }

    /// Makes broker `id` the coordinator of consumer group `group`.
    public func setCoordinator(ofGroup group: String, to id: Int32) throws(KafkaError) {
        let err = rd_kafka_mock_coordinator_set(cluster, "group", group, id)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "set the coordinator of \(group)") }
    }

    /// Delays every answer of broker `id` by `delay` (a slow or distant broker).
    public func setRoundTripDelay(of id: Int32, to delay: Duration) throws(KafkaError) {
        let err = rd_kafka_mock_broker_set_rtt(cluster, id, Int32(delay.wholeMilliseconds))
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "delay broker \(id)") }
        brokerConditions.withLock { $0.answerDelays[id] = delay }
    }

    /// Brings broker `id` back up.
    public func bringBrokerUp(_ id: Int32) throws(KafkaError) {
        let err = rd_kafka_mock_broker_set_up(cluster, id)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "bring broker \(id) up") }
        _ = brokerConditions.withLock { $0.down.remove(id) }
    }

    /// Kafka protocol requests the mock cluster can be told to refuse (their ApiKey).
    public enum Request: Int16, Sendable {
        case produce = 0
        case fetch = 1
        case offsetCommit = 8
        case initProducerId = 22
        case addPartitionsToTxn = 24
        case addOffsetsToTxn = 25
        case endTxn = 26
        case txnOffsetCommit = 28
    }

    /// Makes the brokers answer as ones that do not know `requests` at all (their ApiVersions leave them out): a
    /// broker without transactions, for instance.
    public func withdraw(_ requests: [Request]) {
        for request in requests { rd_kafka_mock_set_apiversion(cluster, request.rawValue, -1, -1) }
    }

    /// Makes the next `count` requests of one kind fail with `error`, whichever broker they reach, as a real
    /// cluster refuses them (an authorization failure, a rebalance in progress).
    public func refuseNext(_ count: Int, _ request: Request, with error: KafkaError.Code) {
        let errors = [rd_kafka_resp_err_t](repeating: rd_kafka_resp_err_t(error.rawValue), count: count)
        rd_kafka_mock_push_request_errors_array(cluster, request.rawValue, count, errors)
    }

    /// Makes broker `id` answer the next `count` requests of one kind it receives `delay` late each, without an error.
    ///
    /// A leader slow to answer fetches while its other answers (the end of its partitions, a produce) come at once.
    /// What a delayed fetch returns is what the partition held when the request came.
    public func delayNext(_ count: Int, _ request: Request, of id: Int32, by delay: Duration) throws(KafkaError) {
        for _ in 0..<count {
            let err = geoworker_mock_delay_next_request(
                cluster,
                id,
                request.rawValue,
                Int32(delay.wholeMilliseconds)
            )
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "delay broker \(id)'s answers") }
        }
    }

    /// How many of the delays ``delayNext(_:_:of:by:)`` set up for one kind of request broker `id` has not used yet:
    /// one fewer as each such request comes.
    public func delaysLeft(_ request: Request, of id: Int32) throws(KafkaError) -> Int {
        var count = 0
        let err = rd_kafka_mock_broker_error_stack_cnt(cluster, id, request.rawValue, &count)
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, "count broker \(id)'s delays") }
        return count
    }

    /// Forgets the refusals of one kind of request not yet used up.
    public func stopRefusing(_ request: Request) {
        rd_kafka_mock_clear_request_errors(cluster, request.rawValue)
    }
}
