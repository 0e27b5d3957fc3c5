import AddressLookups
import Addresses
import AsyncHTTPClient
import Foundation
import GeoCore
import Logging
import Synchronization
import TestSupport
import Testing

/// The address lookups against a real Nominatim (Monaco's extract, `scripts/nominatim.sh`): what a card shows, and
/// what the provider is asked, read from its own access log.
@Suite("Street addresses from a real Nominatim", .serialized, .timeLimit(.minutes(5)))
struct AddressServiceTests {
    /// A running service, its cache directory, and a clock the test can move.
    final class Bed: Sendable {
        let service: AddressService
        let directory: String
        let clock: WallClock
        private let running: Task<Void, any Error>

        init(
            _ configuration: AddressConfiguration,
            directory: String = FileManager.default.temporaryDirectory.appendingPathComponent("addr-\(UUID())").path,
            client: HTTPClient,
            clock: WallClock = WallClock(),
            lookupClock: any LookupClock = SystemLookupClock()
        ) throws {
            self.directory = directory
            self.clock = clock
            service = AddressService(
                configuration: configuration,
                cache: try AddressCache(directory: directory),
                client: client,
                logger: Logger.quiet("test.addresses"),
                wallClock: { clock.now },
                clock: lookupClock
            )
            let service = service
            running = Task { try await service.run() }
        }

        func advance(seconds: Int64) { clock.advance(seconds: seconds) }

        func stop() async {
            running.cancel()
            _ = await running.result
        }
    }

    /// How many cards have their answer.
    final class AnswerCount: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func add() { count.withLock { $0 += 1 } }
    }

    /// The service's wall clock, which a test moves forward.
    final class WallClock: Sendable {
        private let milliseconds = Mutex(AddressService.epochMilliseconds())
        var now: Int64 { milliseconds.withLock { $0 } }
        func advance(seconds: Int64) { milliseconds.withLock { $0 += seconds * 1000 } }
    }

    /// How long a card waits in these tests: what they check is the answer, and a loaded machine (the whole suite
    /// on two cores) can keep a cold Nominatim seconds from its first one.
    private static let patient: Duration = .seconds(60)

    private static func point(_ latitude: Double, _ longitude: Double) -> Coordinate {
        Coordinate(latitude: latitude, longitude: longitude)!
    }

    private static func address(_ status: AddressStatus) -> StreetAddress? {
        switch status {
        case .current(let address), .cached(let address, _, _): return address
        case .pending, .unavailable: return nil
        }
    }

    @Test("a card gets a Monaco point's street address from Nominatim, then from the cache without asking again")
    func monacoAddresses() async throws {
        let nominatim = try await NominatimServer()
        let client = HTTPClient.shared
        let bed = try Bed(
            AddressConfiguration(provider: nominatim.baseURL, maxRequestsPerSecond: 50, cardWait: Self.patient),
            client: client
        )
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        // Three quarters of Monaco: the casino's square, the prince's palace on the Rock, the stadium in Fontvieille.
        let points = [
            (Self.point(43.73965, 7.42770), "Monte-Carlo"), (Self.point(43.73128, 7.42003), "Monaco-Ville"),
            (Self.point(43.72760, 7.41560), "Fontvieille"),
        ]
        for (point, quarter) in points {
            let status = await bed.service.address(at: point)
            guard case .current(let found) = status, let address = found else {
                Issue.record("\(point): \(status)")
                continue
            }
            #expect(address.suburb == quarter, "\(address)")
            #expect(address.city == "Monaco" && address.countryCode == "MC", "\(address)")
            #expect(address.road != nil && address.postcode != nil, "\(address)")
            #expect(address.label.contains(quarter), "\(address)")
            let again = await bed.service.address(at: point)
            guard case .cached(let cached, let age, let stale) = again else {
                Issue.record("asked again: \(again)")
                continue
            }
            #expect(cached == address && age < 60 && !stale)
        }
        #expect(nominatim.reverseRequests == 3)
        await bed.stop()
    }

    @Test("many cards asking for one bucket at once make one request, and all get its answer")
    func coalesces() async throws {
        let nominatim = try await NominatimServer()
        let client = HTTPClient.shared
        let bed = try Bed(AddressConfiguration(provider: nominatim.baseURL, cardWait: Self.patient), client: client)
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        let center = AddressBucket(Self.point(43.7384, 7.4246), meters: 100).center
        let statuses = await withTaskGroup(of: AddressStatus.self) { group in
            for index in 0..<20 {
                // Points a few metres apart, all in the bucket.
                let point = Self.point(center.latitude + Double(index % 5) * 0.00002, center.longitude)
                group.addTask { await bed.service.address(at: point) }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let addresses = Set(statuses.map(Self.address))
        #expect(addresses.count == 1 && addresses.first! != nil, "\(statuses)")
        #expect(nominatim.reverseRequests == 1)
        await bed.stop()
    }

    @Test(
        "no faster than maxRequestsPerSecond: five buckets at 2 a second, one request for each half second of the clock"
    )
    func paced() async throws {
        let nominatim = try await NominatimServer()
        let clock = ManualLookupClock()
        let bed = try Bed(
            AddressConfiguration(provider: nominatim.baseURL, maxRequestsPerSecond: 2, cardWait: Self.patient),
            client: HTTPClient.shared,
            lookupClock: clock
        )
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        let answered = AnswerCount()
        let cards = Task {
            await withTaskGroup(of: AddressStatus.self) { group in
                for index in 0..<5 {
                    group.addTask {
                        let status = await bed.service.address(at: Self.point(43.7300 + Double(index) * 0.002, 7.4200))
                        answered.add()
                        return status
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
        for expected in 1...5 {
            if expected > 1 { clock.advance(by: .milliseconds(500)) }
            // A card is answered only once its request is: the k-th answer means the k-th request went, and the pace
            // holds the next one until the clock moves again (nothing else moves it).
            var budget = WaitBudget(.seconds(60), lookingEvery: .milliseconds(20))
            while answered.value < expected, budget.allowsAnotherLook() {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(answered.value == expected, "answers after \(expected - 1) half seconds of the clock")
            #expect(nominatim.reverseRequests == expected, "requests after \(expected - 1) half seconds of the clock")
        }
        let statuses = await cards.value
        #expect(statuses.allSatisfy { if case .current = $0 { true } else { false } }, "\(statuses)")
        #expect(nominatim.reverseRequests == 5)
        await bed.stop()
    }

    @Test("answers outlive the process; past the time-to-live one is shown stale while a fresh one is asked")
    func restartAndStaleness() async throws {
        let nominatim = try await NominatimServer()
        let client = HTTPClient.shared
        let configuration = AddressConfiguration(
            provider: nominatim.baseURL,
            ttl: .seconds(3600),
            cardWait: Self.patient
        )
        let point = Self.point(43.7396, 7.4277)
        let first = try Bed(configuration, client: client)
        defer { try? FileManager.default.removeItem(atPath: first.directory) }
        guard case .current(let address?) = await first.service.address(at: point) else {
            Issue.record("no address")
            return
        }
        await first.stop()
        // The same clock: an answer's age moves only when the test moves it.
        let restarted = try Bed(configuration, directory: first.directory, client: client, clock: first.clock)
        #expect(await restarted.service.address(at: point) == .cached(address, ageSeconds: 0, stale: false))
        #expect(nominatim.reverseRequests == 1, "the restarted service answered from addresses.sqlite")
        restarted.advance(seconds: 3601)
        #expect(await restarted.service.address(at: point) == .cached(address, ageSeconds: 3601, stale: true))
        let deadline = ContinuousClock.now + .seconds(10)
        while nominatim.reverseRequests < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(nominatim.reverseRequests == 2, "the stale answer was asked again")
        var refreshed = await restarted.service.address(at: point)
        while case .cached(_, let age, _) = refreshed, age > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            refreshed = await restarted.service.address(at: point)
        }
        #expect(refreshed == .cached(address, ageSeconds: 0, stale: false))
        await restarted.stop()
    }

    @Test("the provider stopped: cards say unavailable, the breaker opens, and a success after the cool-down closes it")
    func providerStopped() async throws {
        let nominatim = try await NominatimServer()
        let client = HTTPClient.shared
        let clock = ManualLookupClock()
        let bed = try Bed(
            AddressConfiguration(
                provider: nominatim.baseURL,
                maxRequestsPerSecond: 100,
                // A stopped provider refuses connections, which the HTTP client retries until the request's deadline:
                // a short one lets each failure come within the card's wait.
                timeout: .milliseconds(500),
                cardWait: Self.patient,
                breakerFailures: 3,
                breakerCoolDown: .seconds(2)
            ),
            client: client,
            lookupClock: clock
        )
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        nominatim.stop()
        for index in 0..<3 {
            // The pace (100 a second) lets each request go 10 ms of the lookups' clock after the one before.
            clock.advance(by: .milliseconds(10))
            let status = await bed.service.address(at: Self.point(43.7300 + Double(index) * 0.002, 7.4200))
            guard case .unavailable(let reason) = status else {
                Issue.record("with the provider stopped: \(status)")
                continue
            }
            #expect(reason.hasPrefix("the address provider failed"), "\(reason)")
        }
        let open = await bed.service.address(at: Self.point(43.7400, 7.4200))
        guard case .unavailable(let reason) = open else {
            Issue.record("with the breaker open: \(open)")
            return
        }
        #expect(reason.hasPrefix("the address provider is failing; asked again in"), "\(reason)")
        try await nominatim.start()
        // The provider is back, but the breaker stays open until its cool-down has passed on the lookups' clock.
        let stillOpen = await bed.service.address(at: Self.point(43.7400, 7.4200))
        #expect(
            stillOpen == .unavailable(reason: "the address provider is failing; asked again in 2 s"),
            "\(stillOpen)"
        )
        #expect(nominatim.reverseRequests == 0)
        clock.advance(by: .seconds(2))
        var budget = WaitBudget(.seconds(20), lookingEvery: .milliseconds(100))
        var status = await bed.service.address(at: Self.point(43.7400, 7.4200))
        var failedTrials = 0
        while Self.address(status) == nil, budget.allowsAnotherLook() {
            if case .unavailable(let reason) = status, reason.hasPrefix("the address provider is failing") {
                // The trial failed and opened the breaker again: a provider just started can answer its first
                // request past the 500 ms timeout on a loaded machine. Another cool-down lets another trial go.
                failedTrials += 1
                clock.advance(by: .seconds(2))
            }
            try await Task.sleep(for: .milliseconds(100))
            status = await bed.service.address(at: Self.point(43.7400, 7.4200))
        }
        #expect(Self.address(status) != nil, "after the cool-down (\(failedTrials) trials failed): \(status)")
        clock.advance(by: .milliseconds(10))
        #expect(await bed.service.address(at: Self.point(43.7350, 7.4200)) != .pending)
        await bed.stop()
    }

    @Test(
        "bad answers (an HTTP error, a body that does not read) make an unavailable card, never a crash",
        arguments: [
            (
                "/no-such-path", AddressProviderDialect.nominatim,
                "the address provider failed: the provider answered 404 Not Found"
            ),
            // Asked as Photon, Nominatim answers in its default format, XML.
            ("", .photon, "the address provider failed: the answer is not JSON"),
        ]
    )
    func badAnswers(path: String, dialect: AddressProviderDialect, reason: String) async throws {
        let nominatim = try await NominatimServer()
        let client = HTTPClient.shared
        let bed = try Bed(
            AddressConfiguration(provider: nominatim.baseURL + path, dialect: dialect, cardWait: Self.patient),
            client: client
        )
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        let status = await bed.service.address(at: Self.point(43.7396, 7.4277))
        #expect(status == .unavailable(reason: reason))
        #expect(nominatim.reverseRequests == 1)
        await bed.stop()
    }

    @Test("a provider that takes the connection and never answers times out: unavailable, never a crash")
    func timesOut() async throws {
        let port = try freeLocalPort()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(bound == 0 && listen(listener, 16) == 0)
        let bed = try Bed(
            AddressConfiguration(
                provider: "http://127.0.0.1:\(port)",
                timeout: .milliseconds(300),
                cardWait: Self.patient
            ),
            client: HTTPClient.shared
        )
        defer { try? FileManager.default.removeItem(atPath: bed.directory) }
        let status = await bed.service.address(at: Self.point(43.7396, 7.4277))
        #expect(status == .unavailable(reason: "the address provider failed: no answer within 0.3 seconds"))
        await bed.stop()
    }
}
