import ArgumentParser
import Foundation

/// `geoworker probe`: asks a running worker's `/health` or `/ready`, for a container's health check.
struct ProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Ask a running worker's /health or /ready; exit 0 if it answers 200, else 1.",
        discussion: """
            For a container's health check (the image's HEALTHCHECK runs `geoworker probe health`), where no \
            HTTP client is installed. Prints the worker's answer: its phase and, when not 200, the reason.
            """
    )

    enum Endpoint: String, ExpressibleByArgument, CaseIterable {
        case health, ready
    }

    @Argument(help: "Which probe: health (up and not failed) or ready (consuming).")
    var endpoint: Endpoint = .health

    @Option(help: "Host of the operations port.")
    var host = "127.0.0.1"

    @Option(help: "The operations port (env GEOWORKER_HTTP_PORT; default 8080).")
    var port = ProcessInfo.processInfo.environment["GEOWORKER_HTTP_PORT"].flatMap(Int.init) ?? 8080

    @Option(help: "How long the connection and the answer may each take, in milliseconds.")
    var timeoutMs = 3000

    func run() throws {
        let probe = HTTPProbe(host: host, port: port, timeoutMilliseconds: max(1, timeoutMs))
        do {
            let answer = try probe.get("/\(endpoint.rawValue)")
            print(
                "/\(endpoint.rawValue): \(answer.status) \(answer.body.split(separator: "\n").joined(separator: ": "))"
            )
            if answer.status != 200 { throw ExitCode.failure }
        } catch let failure as HTTPProbe.Failure {
            print("/\(endpoint.rawValue): no answer: \(failure)")
            throw ExitCode.failure
        }
    }
}
