import Configuration
import Operations
import TestSupport
import Testing
import Worker

@Suite("The operations port's settings", .timeLimit(.minutes(5)))
struct OperationsConfigurationTests {
    @Test("the operations port: defaults, both keys, and a port out of range")
    func operationsPort() throws {
        #expect(try OperationsServer.Configuration(config: ConfigReader.inMemory([:])).port == 8080)
        #expect(try OperationsServer.Configuration(config: ConfigReader.inMemory([:])).host == "0.0.0.0")
        let set = try OperationsServer.Configuration(
            config: ConfigReader.inMemory(["host": "127.0.0.1", "port": 9_100])
        )
        #expect(set.host == "127.0.0.1" && set.port == 9_100)
        #expect(throws: WorkerError.self) {
            try OperationsServer.Configuration(config: ConfigReader.inMemory(["port": 70_000]))
        }
    }
}
