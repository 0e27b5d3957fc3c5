public import Addresses
public import AsyncHTTPClient
import Foundation
public import GeoCore
public import Logging
public import ServiceLifecycle
import Synchronization
import Threads

/// Street addresses for the device cards, looked up off the hot path: asks come from the cards (``address(at:)``)
/// and, with `prefetch`, from the apply threads (``prefetch(from:to:)``, which never waits); lookups run here, one request
/// in flight per bucket, paced, bounded and behind a circuit breaker (``AddressLookupQueue``), their answers kept in
/// ``AddressCache``.
///
/// Nothing the worker emits or checkpoints reads an address: events stay the same whatever the provider answers.
public final class AddressService: Service, AddressPrefetching, Sendable {
    public let configuration: AddressConfiguration
    private let provider: AddressProvider
    private let cache: AddressCache
    /// The cache's SQLite calls, off Swift's cooperative pool.
    private let storage = DedicatedThread(name: "gw-addresses")
    private let state: Mutex<State>
    private let wakeUps: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let metrics: AddressMetrics
    private let logger: Logger
    /// Milliseconds since the epoch: answers outlive the process, so their times are the wall clock's.
    private let wallClock: @Sendable () -> Int64
    /// The pace's, the breaker's and the waits' time.
    private let clock: any LookupClock

    private struct State: ~Copyable {
        var queue: AddressLookupQueue
        /// Cards waiting for a bucket's answer, by a number of their own (so that one whose wait ran out leaves).
        var waiters: [AddressBucket: [(number: Int, continuation: CheckedContinuation<Outcome?, Never>)]] = [:]
        var nextWaiter = 0
        /// Buckets the apply threads' fixes entered, for the run loop to check against the cache and ask.
        var prefetches: PrefetchBuffer
        /// When the run loop may next take the prefetches (``prefetchInterval``).
        var nextPrefetchLook: ContinuousClock.Instant
        /// When the run loop is already to wake up for a wait the queue asked for.
        var timerDue: ContinuousClock.Instant?
    }

    /// How one ask ended, for the cards that waited for it.
    enum Outcome: Sendable {
        case answered(StreetAddress?)
        case failed(String)
        case dropped
    }

    /// How often the run loop takes the prefetches: each take is one transaction on the cache however many buckets
    /// it holds, so that a stream entering many buckets (a catch-up) costs a few transactions a second, not one each.
    static let prefetchInterval: Duration = .milliseconds(250)

    /// - Parameters:
    ///   - configuration: the settings; `provider` must be set.
    ///   - cache: where answers are kept.
    ///   - client: the HTTP client the requests go through (its owner shuts it down).
    ///   - logger: where failures are logged.
    ///   - wallClock: now, in milliseconds since the epoch.
    ///   - clock: the pace's, the breaker's and the waits' time.
    public init(
        configuration: AddressConfiguration,
        cache: AddressCache,
        client: HTTPClient,
        logger: Logger,
        wallClock: @escaping @Sendable () -> Int64 = AddressService.epochMilliseconds,
        clock: any LookupClock = SystemLookupClock()
    ) {
        precondition(configuration.provider != nil, "an address service needs a provider")
        self.configuration = configuration
        provider = AddressProvider(
            base: configuration.provider ?? "",
            dialect: configuration.dialect,
            userAgent: configuration.userAgent,
            timeout: configuration.timeout,
            client: client
        )
        self.cache = cache
        state = Mutex(
            State(
                queue: AddressLookupQueue(
                    capacity: configuration.queueCapacity,
                    pacing: RequestPacing(maxRequestsPerSecond: configuration.maxRequestsPerSecond),
                    breaker: CircuitBreaker(
                        threshold: configuration.breakerFailures,
                        coolDown: configuration.breakerCoolDown
                    )
                ),
                // No more than the queue could hold: a miss beyond it would only push out an older ask.
                prefetches: PrefetchBuffer(capacity: configuration.queueCapacity),
                nextPrefetchLook: clock.now
            )
        )
        (wakeUps, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        metrics = AddressMetrics()
        self.logger = logger
        self.wallClock = wallClock
        self.clock = clock
    }

    deinit {
        storage.stop()
    }

    /// Now, in milliseconds since the epoch.
    public static func epochMilliseconds() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1000)
    }

    // MARK: Asking

    /// The address at `point` for a card: a cached answer at once (a stale one also asks for a fresh one), else
    /// asked of the provider and waited for up to `cardWait`.
    public func address(at point: Coordinate) async -> AddressStatus {
        let bucket = AddressBucket(point, meters: configuration.bucketMeters)
        let now = wallClock()
        if let entry = await cachedEntry(for: bucket, now: now) {
            metrics.hit()
            let stale = entry.isExpired(at: now)
            if stale { ask(bucket) }
            return .cached(entry.address, ageSeconds: max(0, now - entry.fetchedAt) / 1000, stale: stale)
        }
        metrics.miss()
        if let reopens = state.withLock({ $0.queue.breaker.reopensAt }) {
            ask(bucket, isUrgent: true)
            let seconds = max(0, Int((reopens - clock.now).components.seconds))
            return .unavailable(reason: "the address provider is failing; asked again in \(seconds) s")
        }
        switch await answer(for: bucket, waitingUpTo: configuration.cardWait) {
        case .answered(let address): return .current(address)
        case .failed(let reason): return .unavailable(reason: reason)
        case .dropped: return .unavailable(reason: "too many addresses asked at once; look again")
        case nil: return .pending
        }
    }

    /// A device's fix moved from `previous` (nil for its first) to `point`: when that enters another bucket, the
    /// bucket's address is asked if the cache has no current one.
    ///
    /// Never waits, and costs a bucket comparison when the fix stays in its bucket: the apply threads call it for
    /// every fix applied.
    public func prefetch(from previous: Coordinate?, to point: Coordinate) {
        let bucket = AddressBucket(point, meters: configuration.bucketMeters)
        if let previous, AddressBucket(previous, meters: configuration.bucketMeters) == bucket { return }
        let (wasEmpty, addition) = state.withLock { state in
            (state.prefetches.isEmpty, state.prefetches.add(bucket))
        }
        if addition == .addedDroppingOldest { metrics.drop() }
        // The run loop takes them all at once: one wake-up for the first suffices.
        if wasEmpty { wake.yield() }
    }

    private func ask(_ bucket: AddressBucket, isUrgent: Bool = false) {
        let ask = state.withLock { $0.queue.ask(bucket, isUrgent: isUrgent) }
        note(ask)
        wake.yield()
    }

    private func note(_ ask: AddressLookupQueue.Ask) {
        switch ask {
        case .queued: break
        case .coalesced: metrics.coalesce()
        case .queuedDropping(let oldest):
            metrics.drop()
            resume(oldest, with: .dropped)
        }
    }

    /// Asks for `bucket` and waits for its answer, at most `limit`; nil when the wait ran out.
    private func answer(for bucket: AddressBucket, waitingUpTo limit: Duration) async -> Outcome? {
        // A card's ask: a person waits for it, ahead of the prefetches.
        guard limit > .zero else {
            ask(bucket, isUrgent: true)
            return nil
        }
        let number = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        let deadline = Task { [clock] in
            try? await clock.sleep(until: clock.now + limit)
            self.resumeWaiter(number, of: bucket, with: nil)
        }
        defer { deadline.cancel() }
        return await withCheckedContinuation { continuation in
            // Asked and registered in one step: the answer cannot come in between.
            let ask = state.withLock { state in
                state.waiters[bucket, default: []].append((number, continuation))
                return state.queue.ask(bucket, isUrgent: true)
            }
            note(ask)
            wake.yield()
        }
    }

    private func resumeWaiter(_ number: Int, of bucket: AddressBucket, with outcome: Outcome?) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome?, Never>? in
            guard let index = state.waiters[bucket]?.firstIndex(where: { $0.number == number }) else { return nil }
            return state.waiters[bucket]?.remove(at: index).continuation
        }
        continuation?.resume(returning: outcome)
    }

    private func resume(_ bucket: AddressBucket, with outcome: Outcome) {
        let waiting = state.withLock { $0.waiters.removeValue(forKey: bucket) ?? [] }
        for waiter in waiting { waiter.continuation.resume(returning: outcome) }
    }

    // MARK: Looking up

    /// Carries out the queue's steps until the service group shuts down.
    public func run() async throws {
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                for await _ in wakeUps {
                    if let later = await askForPrefetches() { scheduleWakeUp(at: later, in: &group) }
                    while true {
                        let (step, waiting, breaker) = state.withLock { state in
                            (state.queue.next(at: clock.now), state.queue.waitingCount, state.queue.breaker.state)
                        }
                        metrics.queue(waiting: waiting)
                        metrics.breaker(breaker)
                        guard case .send(let bucket) = step else {
                            if case .wait(let until) = step { scheduleWakeUp(at: until, in: &group) }
                            break
                        }
                        group.addTask { await self.lookUp(bucket) }
                    }
                }
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.wake.finish()
        }
        // Cards still waiting get no answer rather than waiting forever.
        let waiting = state.withLock { state in
            defer { state.waiters = [:] }
            return state.waiters.values.flatMap { $0 }
        }
        for waiter in waiting { waiter.continuation.resume(returning: nil) }
    }

    private func scheduleWakeUp(at instant: ContinuousClock.Instant, in group: inout DiscardingTaskGroup) {
        let isNew = state.withLock { state in
            if let due = state.timerDue, due <= instant { return false }
            state.timerDue = instant
            return true
        }
        guard isNew else { return }
        group.addTask {
            try? await self.clock.sleep(until: instant)
            self.state.withLock { if $0.timerDue == instant { $0.timerDue = nil } }
            self.wake.yield()
        }
    }

    /// Asks for the prefetched buckets whose cached answer is missing or expired, at most every ``prefetchInterval``;
    /// returns when to look again when it is too early.
    private func askForPrefetches() async -> ContinuousClock.Instant? {
        let take = state.withLock { state -> PrefetchTake in
            guard !state.prefetches.isEmpty else { return .nothing }
            let now = clock.now
            guard now >= state.nextPrefetchLook else { return .tooEarly(until: state.nextPrefetchLook) }
            state.nextPrefetchLook = now + Self.prefetchInterval
            return .buckets(state.prefetches.take())
        }
        let buckets: [AddressBucket]
        switch take {
        case .nothing: return nil
        case .tooEarly(let until): return until
        case .buckets(let taken): buckets = taken
        }
        let now = wallClock()
        let cache = cache
        let expiries: [AddressBucket: Int64]
        do {
            expiries = try await storage.run { () throws(AddressCacheError) in try cache.expiries(of: buckets, now: now)
            }
        } catch {
            logger.warning("cannot read the address cache", metadata: ["error": "\(error)"])
            expiries = [:]
        }
        let missing = buckets.filter { expiries[$0].map { $0 <= now } ?? true }
        metrics.hit(buckets.count - missing.count)
        metrics.miss(missing.count)
        let asks = state.withLock { state in missing.map { state.queue.ask($0) } }
        for ask in asks { note(ask) }
        return nil
    }

    /// What the run loop finds waiting among the prefetches.
    private enum PrefetchTake {
        case nothing
        /// Some wait, but the last take was less than ``prefetchInterval`` ago.
        case tooEarly(until: ContinuousClock.Instant)
        case buckets([AddressBucket])
    }

    private func lookUp(_ bucket: AddressBucket) async {
        metrics.request()
        let result = await provider.lookUp(bucket.center)
        let now = wallClock()
        switch result {
        case .success(let reading):
            var address: StreetAddress?
            if case .address(let found) = reading { address = found }
            let entry = AddressCache.Entry(
                address: address,
                fetchedAt: now,
                expiresAt: now + configuration.ttl.components.seconds * 1000
            )
            let cache = cache
            do {
                try await storage.run { () throws(AddressCacheError) in try cache.store(entry, for: bucket, now: now) }
            } catch {
                logger.warning("cannot keep an address in the cache", metadata: ["error": "\(error)"])
            }
            state.withLock { $0.queue.finished(bucket, succeeded: true, at: clock.now) }
            metrics.answers(found: address != nil)
            resume(bucket, with: .answered(address))
        case .failure(let failure):
            state.withLock { $0.queue.finished(bucket, succeeded: false, at: clock.now) }
            metrics.errors(failure.kind)
            logger.warning(
                "address lookup failed",
                metadata: ["bucket": "\(bucket)", "reason": "\(failure.kind)", "error": "\(failure.description)"]
            )
            resume(bucket, with: .failed("the address provider failed: \(failure.description)"))
        }
        wake.yield()
    }

    private func cachedEntry(for bucket: AddressBucket, now: Int64) async -> AddressCache.Entry? {
        let cache = cache
        do {
            return try await storage.run { () throws(AddressCacheError) in try cache.entry(for: bucket, now: now) }
        } catch {
            logger.warning("cannot read the address cache", metadata: ["error": "\(error)"])
            return nil
        }
    }
}
