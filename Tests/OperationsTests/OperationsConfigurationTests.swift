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

    @Test("the device endpoints without a token on every interface refuse to start, saying the three ways on")
    func openDevices() throws {
        let error = try #require(throws: WorkerError.self) {
            try OperationsServer.Configuration(config: ConfigReader.inMemory(["devices": true]))
        }
        for words in ["0.0.0.0:8080", "set http.token", "http.host 127.0.0.1", "http.allowOpenDevices"] {
            #expect(error.message.contains(words), "\(error.message)")
        }
        #expect(throws: WorkerError.self) {
            try OperationsServer.Configuration(config: ConfigReader.inMemory(["devices": true, "host": "10.0.0.5"]))
        }
        for allowed: [AbsoluteConfigKey: ConfigValue] in [
            ["devices": true, "token": ConfigValue("t0ken", isSecret: true)],
            ["devices": true, "host": "127.0.0.1"],
            ["devices": true, "host": "localhost"],
            ["devices": true, "allowOpenDevices": true],
            ["devices": false],
        ] {
            #expect(throws: Never.self, "\(allowed)") {
                try OperationsServer.Configuration(config: ConfigReader.inMemory(allowed))
            }
        }
    }
}
