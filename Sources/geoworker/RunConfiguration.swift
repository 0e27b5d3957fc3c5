import Addresses
import Logging
import Operations
import Worker

/// Everything `geoworker run` reads: the worker's settings, the operations port's, and the process's own.
struct RunConfiguration: Sendable {
    /// Log lines of this level and above go to standard error.
    ///
    /// Default: `info`.
    var logLevel: Logger.Level
    /// How long a graceful stop (SIGTERM, SIGINT) may take before the process gives up waiting; nothing unpersisted is
    /// lost, the next start replays it.
    ///
    /// Default: 30 s.
    var shutdownTimeout: Duration
    var worker: WorkerConfiguration
    var http: OperationsServer.Configuration
    /// The street addresses a device card shows (off unless `address.provider` is set).
    var address: AddressConfiguration

    init(
        logLevel: Logger.Level = .info,
        shutdownTimeout: Duration = .seconds(30),
        worker: WorkerConfiguration = WorkerConfiguration(),
        http: OperationsServer.Configuration = OperationsServer.Configuration(),
        address: AddressConfiguration = AddressConfiguration()
    ) {
        self.logLevel = logLevel
        self.shutdownTimeout = shutdownTimeout
        self.worker = worker
        self.http = http
        self.address = address
    }
}
