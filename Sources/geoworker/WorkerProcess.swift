import Addresses
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals
import Worker

/// A worker and its operations endpoints running together until SIGTERM or SIGINT, as `geoworker run` and
/// `geoworker demo --serve` run them.
enum WorkerProcess {
    /// Runs both; a graceful stop goes in reverse order: the worker stops first, the endpoints last.
    ///
    /// - Parameters:
    ///   - worker: the worker, run as a service.
    ///   - http: the operations endpoints' server.
    ///   - addresses: the street addresses' lookups, when a provider is set.
    ///   - shutdownTimeout: how long a stop may take before it gives up (nothing unpersisted is
    ///     lost: the next start replays it).
    ///   - logger: where the service group logs.
    /// - Throws: the worker's error, or the server's.
    static func run(
        worker: Worker,
        http: some ApplicationProtocol,
        addresses: AddressService? = nil,
        shutdownTimeout: Duration,
        logger: Logger
    ) async throws {
        var group = ServiceGroupConfiguration(
            services: (addresses.map { [.init(service: $0)] } ?? []) + [
                .init(service: http),
                .init(
                    service: WorkerService(worker: worker),
                    successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup,
                    serviceName: "worker"
                ),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // A stop that cannot finish (deliveries waiting out a broker outage) gives up after this.
        group.maximumGracefulShutdownDuration = shutdownTimeout
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
    }
}
