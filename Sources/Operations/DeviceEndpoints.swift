import Foundation
import GeoCore
import Hummingbird
import NIOCore
public import Worker

/// The endpoints that show devices, on the operations port.
///
/// - the live map page and what it loads (``MapPage``);
/// - `GET /devices/{deviceId}`: the device's status card (``DeviceStatusCard``), with the street address of its last
///   fix when an address provider is set (``EndpointAddresses``); 404 naming the partition that holds a device this
///   instance does not;
/// - `GET /devices/nearby?lat=&lon=&radius=&limit=`: the devices nearest a point (``DeviceNearbySelection``), each with
///   the street address of its last fix when a provider is set;
/// - `GET /map/devices?bbox=west,south,east,north&limit=n`: the devices in view at their last fix, with
///   their pins, bounded (``DeviceMapSelection``);
/// - `GET /geofences?bbox=west,south,east,north&tag=t&limit=n`: the fleet catalog's geofences in view, each whole with
///   its tags (``CatalogView``); 404 saying so when the worker reads no catalog;
/// - `GET /events/stream?device=id`: the events as they are sent, as Server-Sent Events (``EventFeed``); with
///   `http.advertisedAddress` the whole group's, read from the events topic, each once (``GroupEventFeed``);
/// - `GET /group`: the group's instances and the input partitions each holds (with `http.advertisedAddress`).
///
/// With `http.advertisedAddress` set, the card, the nearby answer and the map answer for the whole group
/// (``GroupAnswers``); `scope=local` asks this instance alone.
///
/// Device positions are personal data: all of them answer 404 unless `http.devices` is on, and 401 without
/// the bearer token when `http.token` is set.
public struct DeviceEndpoints: Sendable {
    /// What the endpoints read: the worker's answers about its devices and its live events.
    public struct Sources: Sendable {
        public let queries: DeviceQueries
        public let feed: EventFeed
        /// The street addresses the card and the nearby answer show, when an address provider is set.
        public let addresses: EndpointAddresses?
        /// The group's instances and what each holds, when this instance advertises its address
        /// (`http.advertisedAddress`): the card, the nearby answer and the map then answer for the whole group.
        public let group: GroupDirectory?
        /// The whole group's events, read from the events topic (``GroupEventFeed``), with ``group``.
        public let groupFeed: EventFeed?

        public init(
            queries: DeviceQueries,
            feed: EventFeed,
            addresses: EndpointAddresses? = nil,
            group: GroupDirectory? = nil,
            groupFeed: EventFeed? = nil
        ) {
            self.queries = queries
            self.feed = feed
            self.addresses = addresses
            self.group = group
            self.groupFeed = groupFeed
        }
    }

    /// Who may see device data.
    struct Access: Sendable {
        let enabled: Bool
        let token: String?

        static let cookieName = "geoworker_token"

        /// The answer to a request that may not see device data, or nil when it may.
        func refusal(_ request: Request) -> Response? {
            guard enabled else {
                return DeviceEndpoints.error(
                    .notFound,
                    "device endpoints are off: enable them with http.devices=true (GEOWORKER_HTTP_DEVICES=true), "
                        + "and set http.token to require a bearer token"
                )
            }
            guard let token else { return nil }
            guard let presented = Self.presentedToken(request) else {
                return unauthorized("this endpoint requires Authorization: Bearer <http.token>")
            }
            guard Self.constantTimeEqual(Array(presented.utf8), Array(token.utf8)) else {
                return unauthorized("the bearer token is not this service's http.token")
            }
            return nil
        }

        private func unauthorized(_ message: String) -> Response {
            var response = DeviceEndpoints.error(.unauthorized, message)
            response.headers[.wwwAuthenticate] = "Bearer realm=\"geoworker\""
            return response
        }

        /// The token of an `Authorization: Bearer` header, else of the page's cookie.
        static func presentedToken(_ request: Request) -> String? {
            if let authorization = request.headers[.authorization] {
                let prefix = "bearer "
                guard authorization.lowercased().hasPrefix(prefix) else { return nil }
                return String(authorization.dropFirst(prefix.count)).trimmingCharacters(in: .whitespaces)
            }
            for header in request.headers[values: .cookie] {
                for pair in header.split(separator: ";") {
                    let parts = pair.split(separator: "=", maxSplits: 1)
                    guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else {
                        continue
                    }
                    return String(parts[1]).removingPercentEncoding
                }
            }
            return nil
        }

        /// Compares in a time that does not depend on where the bytes first differ.
        static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
            var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
            for index in 0..<max(left.count, right.count) {
                difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
            }
            return difference == 0
        }
    }

    let access: Access
    let sources: Sources?
    let mapLimit: Int
    /// The page's map: its tiles and where Leaflet is.
    let mapSettings: MapPage.Settings
    /// The answers for the whole group; nil when this instance answers for itself only.
    let group: GroupAnswers?

    /// The group's answers unless the request asks this instance alone (``GroupAnswers/isLocal(_:)``).
    private func group(for request: Request) -> GroupAnswers? {
        GroupAnswers.isLocal(request) ? nil : group
    }

    func register<Context: RequestContext>(on router: Router<Context>) {
        MapPage(access: access, served: sources != nil, settings: mapSettings).register(on: router)
        router.get("devices/nearby") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            guard let sources else { return Self.notServed() }
            switch NearbyQuery.read(request.uri.queryParameters, maximumLimit: mapLimit) {
            case .failure(let problem): return Self.error(.badRequest, problem.message)
            case .success(let query):
                var answer = await sources.queries.ask(.nearby(query.center, radius: query.radius, limit: query.limit))
                if let addresses = sources.addresses, case .nearby(let selection) = answer {
                    answer = .json(await addresses.adding(to: selection))
                }
                guard let group = group(for: request) else { return Self.response(answer) }
                return await group.nearby(
                    path: Self.pathAndQuery(request),
                    limit: query.limit,
                    local: Self.json(answer)
                )
            }
        }
        router.get("devices/:deviceId") { request, context in
            if let refusal = access.refusal(request) { return refusal }
            guard let sources, let raw = context.parameters.get("deviceId") else { return Self.notServed() }
            let deviceId = raw.removingPercentEncoding ?? raw
            let now = Int64((Date().timeIntervalSince1970 * 1000).rounded())
            var answer = await sources.queries.ask(.statusCard(deviceId: deviceId, now: now))
            if let addresses = sources.addresses, case .json(let card) = answer {
                answer = .json(await addresses.adding(to: card))
            }
            if let group = group(for: request), case .notHeld(let message) = answer {
                return await group.card(of: deviceId, notHeldHere: message)
            }
            return Self.response(answer)
        }
        router.get("map/devices") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            guard let sources else { return Self.notServed() }
            let parameters = request.uri.queryParameters
            switch Self.viewAndLimit(parameters, cap: mapLimit) {
            case .failure(let refusal): return refusal.response
            case .success(let (view, limit)):
                let answer = await sources.queries.ask(.map(view, limit: limit))
                guard let group = group(for: request) else { return Self.response(answer) }
                return await group.map(path: Self.pathAndQuery(request), limit: limit, local: Self.json(answer))
            }
        }
        router.get("group") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            guard let group else {
                return Self.error(
                    .notFound,
                    "this instance reads no group directory: set http.advertisedAddress on every instance of the group"
                )
            }
            return group.description()
        }
        router.get("geofences") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            guard let sources else { return Self.notServed() }
            let parameters = request.uri.queryParameters
            let tag: String? = parameters.get("tag").map { String($0) }
            switch Self.viewAndLimit(parameters, cap: Self.geofenceLimit) {
            case .failure(let refusal): return refusal.response
            case .success(let (view, limit)):
                return Self.response(await sources.queries.ask(.catalog(view, tag: tag, limit: limit)))
            }
        }
        router.get("events/stream") { request, _ in
            if let refusal = access.refusal(request) { return refusal }
            guard let sources else { return Self.notServed() }
            let deviceId = request.uri.queryParameters.get("device")
            // The group's events with a group directory (`scope=local`: the events this instance sends).
            let feed = group(for: request) != nil ? sources.groupFeed ?? sources.feed : sources.feed
            return Self.eventStream(feed.subscribe(deviceId: deviceId))
        }
    }

    /// The most catalog geofences one answer of `GET /geofences` carries (polygons whole: a few MB at most).
    static let geofenceLimit = 2_000

    /// How often an idle event stream is written to.
    static let keepAliveInterval: Duration = .seconds(15)

    /// Server-Sent Events: each event as `event: device-event` with its CloudEvent JSON as the data; when the
    /// client fell behind, first an `event: missed` with the number of events it lost so far.
    static func eventStream(_ subscription: EventFeed.Subscription) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody { writer in
                // An idle stream is written to every 15 s: a client that went is noticed, proxies keep it.
                let keepAlive = Task {
                    while !Task.isCancelled {
                        try await Task.sleep(for: keepAliveInterval)
                        subscription.keepAlive()
                    }
                }
                // Ends the subscription when the client goes (the write fails) or the worker stops.
                defer {
                    keepAlive.cancel()
                    subscription.close()
                }
                try await writer.write(ByteBuffer(string: "retry: 2000\n: geoworker events\n\n"))
                var reportedMissed = 0
                for await item in subscription.items {
                    if item.isKeepAlive {
                        try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                        continue
                    }
                    var text = ""
                    let missed = subscription.missed
                    if missed > reportedMissed {
                        reportedMissed = missed
                        text += "event: missed\ndata: {\"missed\":\(missed)}\n\n"
                    }
                    var buffer = ByteBuffer(string: text + "event: device-event\ndata: ")
                    buffer.writeBytes(item.json)
                    buffer.writeString("\n\n")
                    try await writer.write(buffer)
                }
                try await writer.finish(nil)
            }
        )
    }

    /// A request's path with its query, as asked of another instance.
    private static func pathAndQuery(_ request: Request) -> String {
        request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
    }

    /// This instance's own answer as JSON for a merge, or why there is none.
    private static func json(_ answer: DeviceQueries.Answer) -> Result<[UInt8], GroupAnswers.Problem> {
        switch answer {
        case .json(let bytes): .success(bytes)
        case .nearby(let selection): .success(selection.json())
        case .notHeld(let message): .failure(GroupAnswers.Problem(message: message))
        case .busy:
            .failure(GroupAnswers.Problem(message: "did not answer in time (restoring partitions, or stopping)"))
        }
    }

    static func bytes(_ bytes: [UInt8], type: String, caching: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: caching],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    private static func response(_ answer: DeviceQueries.Answer) -> Response {
        switch answer {
        case .json(let bytes):
            return Self.bytes(bytes, type: "application/json", caching: "no-store")
        case .nearby(let selection):
            return Self.bytes(selection.json(), type: "application/json", caching: "no-store")
        case .notHeld(let message):
            return error(.notFound, message)
        case .busy:
            return error(.serviceUnavailable, "the worker did not answer in time (restoring partitions, or stopping)")
        }
    }

    static func notServed() -> Response {
        error(.notFound, "this process serves no devices")
    }

    /// A request's parameters refused, with the answer that says why.
    struct Refusal: Error {
        let response: Response
    }

    /// A map question's `bbox` (default: the world) and `limit` (default and at most `cap`).
    static func viewAndLimit(
        _ parameters: Parameters,
        cap: Int
    ) -> Result<(view: MapView, limit: Int), Refusal> {
        var view = MapView.world
        if let bbox = parameters.get("bbox") {
            guard let parsed = MapView(bbox: bbox) else {
                return .failure(
                    Refusal(
                        response: error(
                            .badRequest,
                            "bbox must be west,south,east,north in degrees (longitudes -180...180, latitudes "
                                + "-90...90, south <= north)"
                        )
                    )
                )
            }
            view = parsed
        }
        var limit = cap
        if let text = parameters.get("limit") {
            guard let value = Int(text), value > 0 else {
                return .failure(Refusal(response: error(.badRequest, "limit must be a positive integer")))
            }
            limit = min(value, cap)
        }
        return .success((view, limit))
    }

    /// `{"error": message}` with the status.
    static func error(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let body =
            (try? JSONSerialization.data(
                withJSONObject: ["error": message],
                options: [.sortedKeys, .withoutEscapingSlashes]
            )) ?? Data()
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: body))
        )
    }
}
