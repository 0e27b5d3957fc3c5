import AsyncHTTPClient
import Foundation
public import Hummingbird
public import Logging
import NIOCore
public import Prometheus
public import Worker

/// The HTTP endpoints operators and orchestrators poll.
///
/// - `GET /metrics`: the Prometheus text exposition of `registry`;
/// - `GET /health`: 200 unless the worker has failed or backs off from a refused delivery (a broker outage
///   is neither: deliveries wait);
/// - `GET /ready`: readiness, 200 only while the worker is consuming.
/// Both probes answer with the worker's phase as the body, and the reason on a second line when there is one.
/// None of them shows device data; the device endpoints and the page (``DeviceEndpoints``) are off unless
/// enabled.
public enum OperationsServer {
    /// Settings of the HTTP endpoints.
    public struct Configuration: Sendable {
        /// The address to listen on.
        ///
        /// Default: `0.0.0.0` (every interface, as a container needs).
        public var host: String
        /// The port to listen on; 0 takes any free port (logged, and passed to `onListening`).
        ///
        /// Default: 8080.
        public var port: Int
        /// Whether the device endpoints and the page are served (`/`, `/devices/{id}`, `/map/devices`,
        /// `/events/stream`).
        ///
        /// They show device positions, which are personal data. Default: false.
        public var devices: Bool
        /// The bearer token the device endpoints and the page require, when set: `Authorization: Bearer TOKEN`, or the
        /// page's `geoworker_token` cookie.
        ///
        /// A secret: never logged. Default: none.
        public var token: String?
        /// Events each live stream client may have waiting before its oldest are dropped (and counted).
        ///
        /// Default: 1000.
        public var streamBuffer: Int
        /// How many of the latest events a new stream client (the page, when it opens) gets first.
        ///
        /// Default: 100.
        public var recentEvents: Int
        /// The most devices one map answer holds; more in view are sampled evenly.
        ///
        /// Default: 2000.
        public var mapLimit: Int
        /// Whether the device endpoints may be served without a token on an address other hosts reach: off, such a
        /// start is refused (``openDevicesProblem``), so that every device's position is never on every interface by
        /// an oversight.
        ///
        /// Default: false.
        public var allowOpenDevices: Bool
        /// Where the other instances of the group reach this one's operations port (`http://host:port`; without a
        /// port, the port it listens on is added): set, the instance tells its group where it answers and which
        /// partitions it holds (`topics.instances`), and its card, nearby answer and map answer for the whole group.
        ///
        /// Default: none (each instance answers for the devices it holds).
        public var advertisedAddress: String?
        /// How long another instance of the group may take to answer its part of a card, a nearby answer or a map.
        ///
        /// Default: 2 s.
        public var peerTimeout: Duration
        /// The page's map: tiles (off by default: the country outlines, offline) and where Leaflet is.
        public var map: MapPage.Settings

        public init(
            host: String = "0.0.0.0",
            port: Int = 8080,
            devices: Bool = false,
            token: String? = nil,
            streamBuffer: Int = 1000,
            recentEvents: Int = 100,
            mapLimit: Int = 2000,
            allowOpenDevices: Bool = false,
            advertisedAddress: String? = nil,
            peerTimeout: Duration = .seconds(2),
            map: MapPage.Settings = MapPage.Settings()
        ) {
            self.host = host
            self.port = port
            self.devices = devices
            self.token = token
            self.streamBuffer = streamBuffer
            self.recentEvents = recentEvents
            self.mapLimit = mapLimit
            self.allowOpenDevices = allowOpenDevices
            self.advertisedAddress = advertisedAddress
            self.peerTimeout = peerTimeout
            self.map = map
        }

        /// Why these settings would show every device's position to anyone who reaches the port, nil when they do
        /// not: the device endpoints on, no token, listening beyond this host, not allowed on purpose.
        public var openDevicesProblem: String? {
            guard devices, token == nil, !allowOpenDevices, !Self.isLoopback(host) else { return nil }
            return "http.devices would serve every device's position without a token to anyone who reaches "
                + "\(host):\(port): set http.token (GEOWORKER_HTTP_TOKEN or the config file), listen on this host only "
                + "(http.host 127.0.0.1), or set http.allowOpenDevices to serve them openly on purpose"
        }

        /// Whether `address` can be advertised: an `http` or `https` URL with a host and no path.
        static func isAdvertisable(_ address: String) -> Bool {
            guard let components = URLComponents(string: address), let scheme = components.scheme?.lowercased(),
                scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
            else { return false }
            return components.path.isEmpty || components.path == "/"
        }

        /// Whether `host` is reached only from this host.
        static func isLoopback(_ host: String) -> Bool {
            host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
        }
    }

    /// The HTTP server as a service for a `ServiceGroup`: it runs until the group shuts down.
    ///
    /// - Parameters:
    ///   - configuration: the address, the port and what is served.
    ///   - health: what `/health` and `/ready` answer from.
    ///   - registry: what `/metrics` shows.
    ///   - devices: what the device endpoints read, served when `configuration.devices` is on.
    ///   - logger: where the server logs.
    ///   - onListening: called with the port once the server accepts connections.
    /// - Returns: the server, ready to run in a service group.
    public static func application(
        configuration: Configuration,
        health: WorkerHealth,
        registry: PrometheusCollectorRegistry,
        devices: DeviceEndpoints.Sources? = nil,
        logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        let router = router(configuration: configuration, health: health, registry: registry, devices: devices)
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: "geoworker"
            ),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                logger.info("HTTP endpoints listening", metadata: [ServiceLogKey.port: "\(port)"])
                await onListening(port)
            },
            logger: logger
        )
    }

    /// Every route the operations port serves (the device endpoints answer 404 unless enabled): what
    /// ``application(configuration:health:registry:devices:logger:onListening:)`` serves, and what
    /// `Schemas/openapi.yaml` documents.
    ///
    /// - Parameters:
    ///   - configuration: what is served.
    ///   - health: what `/health` and `/ready` answer from, and the `geoworker_ready` and `geoworker_healthy`
    ///     gauges.
    ///   - registry: what `/metrics` shows.
    ///   - devices: what the device endpoints read.
    /// - Returns: the router.
    public static func router(
        configuration: Configuration,
        health: WorkerHealth,
        registry: PrometheusCollectorRegistry,
        devices: DeviceEndpoints.Sources? = nil
    ) -> Router<BasicRequestContext> {
        let router = Router()
        DeviceEndpoints(
            access: DeviceEndpoints.Access(
                enabled: configuration.devices && devices != nil,
                token: configuration.token
            ),
            sources: devices,
            mapLimit: configuration.mapLimit,
            mapSettings: configuration.map,
            group: devices?.group.map { directory in
                GroupAnswers(
                    directory: directory,
                    peers: PeerClient(client: .shared, token: configuration.token, timeout: configuration.peerTimeout)
                )
            }
        ).register(on: router)
        // The probes' answers as metrics, set as each scrape comes: an alert on "not ready for 10 minutes" needs
        // them in Prometheus, which does not read /ready.
        let ready = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                metricName: MetricName.ready,
                unitName: "",
                helpText: "1 while /ready answers 200 (consuming)"
            )
        )
        let healthy = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                metricName: MetricName.healthy,
                unitName: "",
                helpText: "1 while /health answers 200"
            )
        )
        router.get("metrics") { _, _ -> Response in
            ready.set(health.isReady ? 1.0 : 0.0)
            healthy.set(health.isHealthy ? 1.0 : 0.0)
            var text: [UInt8] = []
            registry.emit(into: &text)
            return Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: text))
            )
        }
        router.get("health") { _, _ in
            probeResponse(health.isHealthy, phase: health.phase, reason: health.reason)
        }
        router.get("ready") { _, _ in
            probeResponse(health.isReady, phase: health.phase, reason: health.reason)
        }
        return router
    }

    private static func probeResponse(_ isOK: Bool, phase: WorkerHealth.Phase, reason: String?) -> Response {
        Response(
            status: isOK ? .ok : .serviceUnavailable,
            headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: "\(phase)\n" + (reason.map { $0 + "\n" } ?? "")))
        )
    }
}

extension OperationsServer {
    /// A Prometheus factory for swift-metrics with the worker's histogram buckets (batch durations from
    /// 100 µs to 5 s), emitting into `registry`.
    public static func metricsFactory(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[MetricName.batchDuration] = [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.durationHistogramBuckets[MetricName.checkpointDuration] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
            .seconds(10), .seconds(30),
        ]
        return factory
    }
}
