import Testing

@testable import Kafka

/// The connection `MockCluster.takeBrokerDown` holds so that the broker's port stays owned while librdkafka binds it
/// again: it must be one the broker accepted, on the broker that goes down.
///
/// It takes milliseconds; the limit is the suites' usual one: in a full run the test starts among a thousand others
/// and waited 2 to 4 minutes for a thread (a 2-minute limit failed it once).
@Suite("A mock broker's anchor", .timeLimit(.minutes(5)))
struct MockBrokerAnchorTests {
    @Test("every broker answers it, on the port its id's place in the bootstrap list gives; a broker down refuses it")
    func answeredByTheBrokerOfEachId() throws {
        let cluster = try MockCluster(brokers: 3)
        let ports = cluster.bootstrapServers.split(separator: ",").compactMap { $0.split(separator: ":").last }
            .compactMap { UInt16($0) }
        #expect(ports.count == 3)
        for port in ports { #expect(MockBrokerAnchor(port: port) != nil, "broker on port \(port)") }
        try cluster.takeBrokerDown(2)
        #expect(MockBrokerAnchor(port: ports[0]) != nil)
        #expect(MockBrokerAnchor(port: ports[1]) == nil, "broker 2 is down")
        #expect(MockBrokerAnchor(port: ports[2]) != nil)
        try cluster.bringBrokerUp(2)
        #expect(MockBrokerAnchor(port: ports[1]) != nil)
    }
}
