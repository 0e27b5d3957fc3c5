import ArgumentParser
import Logging
import Worker

/// `geoworker demo`: the real pipeline on an embedded Kafka and a bundled trace.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run the worker on an embedded Kafka (or your own) with a sample trace and print the events.",
        discussion: """
            With --brokers, the demo runs on that Kafka instead: it creates topics and a consumer group of this run's \
            own (geoworker-demo-<run>-positions, -commands, -events, -dead-letters; the worker creates its changelog), \
            prints their names and leaves them there for inspection.

            With --serve, the worker then keeps running on the same Kafka and the live map is served at the \
            printed address (device endpoints on, no token: it listens on 127.0.0.1 unless --host says otherwise).
            """
    )

    @Option(help: "Kafka bootstrap servers to run on, instead of the embedded Kafka (HOST:PORT[,HOST:PORT...]).")
    var brokers: String?

    @Option(
        name: .customLong("kafka"),
        parsing: .singleValue,
        help: ArgumentHelp(
            "With --brokers: any librdkafka property, for SASL/SSL (repeatable; consumer./producer. prefixes).",
            valueName: "KEY=VALUE"
        )
    )
    var kafkaProperties: [String] = []

    @Option(help: "Log level of the worker while it runs.")
    var logLevel: Logger.Level = .warning

    @Flag(help: "After the trace, keep the worker running and serve the live map and device endpoints.")
    var serve = false

    @Option(help: "With --serve: the address to listen on (0.0.0.0 for every interface).")
    var host = "127.0.0.1"

    @Option(help: "With --serve: the port of the page and the endpoints; 0 takes a free port.")
    var httpPort = 8080

    func validate() throws {
        if brokers == nil && !kafkaProperties.isEmpty {
            throw ValidationError("--kafka applies to a Kafka given with --brokers; the embedded one needs none")
        }
        if let brokers, brokers.allSatisfy({ $0 == " " || $0 == "," }) {
            throw ValidationError("--brokers must name at least one HOST:PORT")
        }
        for property in kafkaProperties where !property.contains("=") {
            throw ValidationError("--kafka takes KEY=VALUE, not '\(property)'")
        }
    }

    func run() async throws {
        if serve, let problem = ListenCheck.problem(host: host, port: httpPort) {
            throw CommandFailure("geoworker demo --serve: \(problem)")
        }
        logLevel.bootstrapStandardErrorLogging()
        let broker: Demo.Broker
        if let brokers {
            var properties: [String: String] = [:]
            for property in kafkaProperties {
                let parts = property.split(separator: "=", maxSplits: 1)
                properties[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            broker = .existing(brokers: brokers, kafkaProperties: properties)
        } else {
            broker = .embedded
        }
        try await Demo.run(on: broker, serve: serve ? Demo.Serve(host: host, port: httpPort) : nil) { print($0) }
    }
}
