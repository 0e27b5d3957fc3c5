import AddressLookups
import Addresses
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals
import Worker

/// A worker and its operations endpoints running together until SIGTERM or SIGINT, as `geoworker run` and
/// `geoworker demo --serve` run them.
enum WorkerProcess {
    /// How long the worker's loop has to end once a stop passed its deadline.
    static let loopGrace = Duration.seconds(3)

    /// Runs both; a graceful stop goes in reverse order: the worker stops first, the endpoints last.
    ///
    /// - Parameters:
    ///   - worker: the worker, run as a service.
    ///   - http: the operations endpoints' server.
    ///   - addresses: the street addresses' lookups, when a provider is set.
    ///   - presence: the instance's part in its group's directory, when it advertises its address: stopped after the
    ///     worker, so that it tells the group the instance is gone once its partitions are handed over.
    ///   - shutdownTimeout: how long a stop may take before it gives up; the worker's loop then has `loopGrace`, and
    ///     the run throws `shutdown` (nothing stored is lost: the next start replays from the last checkpoint).
    ///   - logger: where the service group logs.
    /// - Throws: the worker's error, or the server's.
    static func run(
        worker: Worker,
        http: some ApplicationProtocol,
        addresses: AddressService? = nil,
        presence: GroupPresence? = nil,
        shutdownTimeout: Duration,
        logger: Logger
    ) async throws {
        var group = ServiceGroupConfiguration(
            services: (addresses.map { [.init(service: $0)] } ?? []) + (presence.map { [.init(service: $0)] } ?? []) + [
                .init(service: http),
                .init(
                    service: WorkerService(
                        worker: worker,
                        stopDeadline: shutdownTimeout,
                        graceAfterDeadline: loopGrace
                    ),
                    successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup,
                    serviceName: "worker"
                ),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // The worker's service keeps the stop's deadline (a stop that cannot finish, deliveries waiting out a broker
        // outage, gives up after `shutdownTimeout`, then `loopGrace` at most): it ends with `shutdown`, exit status 2.
        // The group's own limits are a backstop for the other services (ServiceLifecycle crashes a process whose
        // services outlast its cancellation).
        group.maximumGracefulShutdownDuration = shutdownTimeout + loopGrace + .seconds(5)
        group.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: group).run()
    }
}
