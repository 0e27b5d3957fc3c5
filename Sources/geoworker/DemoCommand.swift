import ArgumentParser
import Logging
import Worker

/// `geoworker demo`: the real pipeline on an embedded Kafka and a bundled trace.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the worker on an embedded Kafka with a sample trace and print the events.",
        discussion: """
            With --serve, the worker then keeps running on the embedded Kafka and the live map is served at the \
            printed address (device endpoints on, no token: it listens on 127.0.0.1 unless --host says otherwise).
            """
    )

    @Option(help: "Log level of the worker while it runs.")
    var logLevel: Logger.Level = .warning

    @Flag(help: "After the trace, keep the worker running and serve the live map and device endpoints.")
    var serve = false

    @Option(help: "With --serve: the address to listen on (0.0.0.0 for every interface).")
    var host = "127.0.0.1"

    @Option(help: "With --serve: the port of the page and the endpoints; 0 takes a free port.")
    var httpPort = 8080

    func run() async throws {
        logLevel.bootstrapStandardErrorLogging()
        try await Demo.run(serve: serve ? Demo.Serve(host: host, port: httpPort) : nil) { print($0) }
    }
}
