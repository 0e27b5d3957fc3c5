import Kafka
import TestSupport
import Testing

/// The broker a service test runs on.
enum TestBroker: CustomStringConvertible {
    /// librdkafka's mock cluster: fault injection, crash expiry, several brokers.
    case mock(MockCluster)
    /// noida-db, a real broker in a process of its own: CreateTopics, transactions, compaction, size limits.
    case noida(NoidaBroker)

    /// Which broker a parameterized test runs on, before it is started.
    enum Kind: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case mock, noida
        var testDescription: String { rawValue == "mock" ? "on the mock cluster" : "on noida-db" }
    }

    /// Starts a broker of `kind`.
    static func start(_ kind: Kind) async throws -> TestBroker {
        switch kind {
        case .mock: .mock(try MockCluster(brokers: 1, logger: ServiceTestBed.logger))
        case .noida: .noida(try await NoidaBroker())
        }
    }

    var bootstrapServers: String {
        switch self {
        case .mock(let cluster): cluster.bootstrapServers
        case .noida(let broker): broker.bootstrapServers
        }
    }

    var description: String {
        switch self {
        case .mock: "the mock cluster at \(bootstrapServers)"
        case .noida: "noida-db at \(bootstrapServers)"
        }
    }

    /// The broker's own log where it has one (noida-db's), for a failing test's message.
    var log: String {
        if case .noida(let broker) = self { return String(broker.log.suffix(3000)) }
        return ""
    }

    /// Creates `topic`: on the mock cluster directly (it has no CreateTopics), on noida-db through the Admin API.
    func createTopic(_ topic: String, partitions: Int, configuration: [String: String] = [:]) throws {
        switch self {
        case .mock(let cluster): try cluster.createTopic(topic, partitions: partitions)
        case .noida(let broker): try broker.createTopic(topic, partitions: partitions, configuration: configuration)
        }
    }
}
