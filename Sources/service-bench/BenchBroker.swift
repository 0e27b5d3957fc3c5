// Which broker the benchmark runs on: librdkafka's mock cluster in this process (the default: its figures are the
// project's), or noida-db in a process of its own (`--broker noida`), which writes transaction markers, so that an
// exactly-once worker's events show to a read_committed reader only once committed. noida-db has no fetch long-poll:
// its consumers spin, so CPU figures taken on it say nothing; its latency figures do.
import Dispatch
import Foundation
import Kafka
import TestSupport

enum BenchBroker {
    case mock(MockCluster)
    case noida(NoidaBroker)

    /// Starts the broker `name` names: `mock` or `noida`.
    static func start(_ name: String) -> BenchBroker {
        switch name {
        case "mock":
            do {
                return .mock(try MockCluster(brokers: 1, logger: logger))
            } catch {
                fail("mock cluster: \(error)")
            }
        case "noida":
            do {
                return .noida(try blockingResult { try await NoidaBroker() }.get())
            } catch {
                fail("noida-db: \(error) (installed by scripts/setup.sh test)")
            }
        default:
            fail("--broker must be mock or noida (got \(name))")
        }
    }

    var bootstrapServers: String {
        switch self {
        case .mock(let cluster): cluster.bootstrapServers
        case .noida(let broker): broker.bootstrapServers
        }
    }

    /// Creates `topic`; noida-db through the Admin API.
    func createTopic(_ topic: String, partitions: Int) throws {
        switch self {
        case .mock(let cluster): try cluster.createTopic(topic, partitions: partitions)
        case .noida(let broker): try broker.createTopic(topic, partitions: partitions)
        }
    }

    /// Stops a broker in a process of its own (noida-db), which would otherwise outlive the benchmark.
    func stop() {
        if case .noida(let broker) = self { broker.stop() }
    }

    /// Whether the worker creates its changelog itself (the mock has no CreateTopics: the benchmark makes it there).
    var createsChangelogs: Bool {
        if case .noida = self { return true }
        return false
    }
}
