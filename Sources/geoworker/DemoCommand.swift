import ArgumentParser
import Logging
import Worker

/// `geoworker demo`: the real pipeline on an embedded Kafka and a bundled trace.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the worker on an embedded Kafka with a sample trace and print the events."
    )

    @Option(help: "Log level of the worker while it runs.")
    var logLevel: Logger.Level = .warning

    func run() async throws {
        logLevel.bootstrapStandardErrorLogging()
        try await Demo.run { print($0) }
    }
}
