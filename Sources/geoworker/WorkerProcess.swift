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
    ///   - group: the instance's part in its group's directory, when it advertises its address, stopped after the
    ///     worker and the endpoints, so that it tells the group the instance is gone once its partitions are handed
    ///     over; and the group's live events, stopped before the endpoints, so that their streams end first.
    ///   - shutdownTimeout: how long a stop may take before it gives up; the worker's loop then has `loopGrace`, and
    ///     the run throws `shutdown` (nothing stored is lost: the next start replays from the last checkpoint).
    ///   - logger: where the service group logs.
    /// - Throws: the worker's error, or the server's.
    static func run(
        worker: Worker,
        http: some ApplicationProtocol,
        addresses: AddressService? = nil,
        group: (presence: GroupPresence, events: GroupEventFeed)? = nil,
        shutdownTimeout: Duration,
        logger: Logger
    ) async throws {
        // A graceful stop ends the services in reverse order.
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let addresses { services.append(.init(service: addresses)) }
        if let group { services.append(.init(service: group.presence)) }
        services.append(.init(service: http))
        if let group { services.append(.init(service: group.events)) }
        services.append(
            .init(
                service: WorkerService(worker: worker, stopDeadline: shutdownTimeout, graceAfterDeadline: loopGrace),
                successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup,
                serviceName: "worker"
            )
        )
        var configuration = ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        // The worker's service keeps the stop's deadline (a stop that cannot finish, deliveries waiting out a broker
        // outage, gives up after `shutdownTimeout`, then `loopGrace` at most): it ends with `shutdown`, exit status 2.
        // The group's own limits are a backstop for the other services (ServiceLifecycle crashes a process whose
        // services outlast its cancellation).
        configuration.maximumGracefulShutdownDuration = shutdownTimeout + loopGrace + .seconds(5)
        configuration.maximumCancellationDuration = .seconds(5)
        try await ServiceGroup(configuration: configuration).run()
    }
}
