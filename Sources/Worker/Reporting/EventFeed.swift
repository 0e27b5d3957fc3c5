import Kafka
public import Metrics
import Synchronization

/// The events the worker produces, offered to live watchers (the page's Server-Sent Events stream) as they
/// are sent, and the most recent of them, which a new watcher gets first (what just happened).
///
/// A watcher never slows the worker: each has a bounded buffer, and when it does not keep up the oldest
/// events it has not taken are dropped and counted (``Subscription/missed``, and the
/// `geoworker_event_stream_missed_total` metric). Offering takes one lock per batch; with nobody watching it
/// copies only the batch's last events, in one piece.
public final class EventFeed: Sendable {
    /// One event: its device's id (the record key) and its CloudEvent JSON, as the events topic got them.
    public struct Item: Sendable {
        public let key: [UInt8]
        public let json: [UInt8]

        public var deviceId: String { String(decoding: key, as: UTF8.self) }

        /// Not an event: a reminder to the stream's writer that the client is still there (an idle
        /// connection is written to now and then, so that a client that went is noticed and proxies keep it).
        public var isKeepAlive: Bool { key.isEmpty }
        static let keepAlive = Item(key: [], json: [])
    }

    /// One watcher's view of the feed.
    public final class Subscription: Sendable {
        /// The recent events, then each new one, in the order they were sent, as this watcher takes them.
        public let items: AsyncStream<Item>
        let continuation: AsyncStream<Item>.Continuation
        /// The device this watcher follows, or nil for all.
        public let deviceId: String?
        private let missedCount = Atomic<Int>(0)

        fileprivate init(deviceId: String?, capacity: Int) {
            self.deviceId = deviceId
            (items, continuation) = AsyncStream.makeStream(of: Item.self, bufferingPolicy: .bufferingNewest(capacity))
        }

        /// How many events this watcher missed because its buffer was full.
        public var missed: Int { missedCount.load(ordering: .relaxed) }

        /// Puts a keep-alive reminder in the stream (``Item/isKeepAlive``).
        public func keepAlive() { continuation.yield(.keepAlive) }

        /// Ends the stream: its reader takes what is buffered, then stops.
        public func close() { continuation.finish() }

        /// Whether the item was dropped for want of room (the watcher's own device filter drops nothing).
        fileprivate func offer(_ item: Item) -> Bool {
            if let deviceId, !item.key.elementsEqual(deviceId.utf8) { return false }
            if case .dropped = continuation.yield(item) {
                missedCount.add(1, ordering: .relaxed)
                return true
            }
            return false
        }
    }

    /// Events a watcher may have waiting before the oldest are dropped.
    public let capacity: Int
    /// How many of the latest events a new watcher gets first.
    public let recentCapacity: Int
    private struct State {
        var watchers: [ObjectIdentifier: Subscription] = [:]
        /// The latest events, oldest first: the ends of the last batches offered.
        ///
        /// At least `recentCapacity` events when that many were offered. Kept as batches (one copy each) rather
        /// than as items (two arrays per event): nearly always nobody watches, and a new watcher is rare.
        var recent: [RecordBuffer] = []
        /// Set by ``close()``: the worker stopped, no stream starts or goes on.
        var closed = false
    }
    private let state = Mutex(State())
    /// `state.watchers.count`, read without the lock by ``offer(_:)``.
    private let watcherCount = Atomic<Int>(0)
    private let missedCounter: Counter
    private let clientsGauge: Gauge

    /// - Parameters:
    ///   - capacity: events each watcher may have waiting.
    ///   - recent: the latest events kept for new watchers (0: none).
    ///   - metricsFactory: where the missed-events counter goes. Default: the process's factory.
    public init(capacity: Int = 1000, recent: Int = 100, metricsFactory: any MetricsFactory = MetricsSystem.factory) {
        precondition(capacity > 0, "a watcher buffers at least one event")
        self.capacity = capacity
        self.recentCapacity = max(0, recent)
        missedCounter = Counter(label: MetricName.eventStreamMissed, factory: metricsFactory)
        clientsGauge = Gauge(label: MetricName.eventStreamClients, factory: metricsFactory)
        clientsGauge.record(0)
    }

    /// Whether anybody watches.
    public var isWatched: Bool { watcherCount.load(ordering: .relaxed) > 0 }

    /// A new watcher of every event, or of one device's: it gets the recent events first, then each new one,
    /// until its stream is dropped or closed.
    public func subscribe(deviceId: String? = nil) -> Subscription {
        let subscription = Subscription(deviceId: deviceId, capacity: capacity)
        let id = ObjectIdentifier(subscription)
        let closed = state.withLock { state in
            // Under the lock, so that no new event overtakes the recent ones.
            for item in Self.items(of: state.recent, last: recentCapacity) { _ = subscription.offer(item) }
            if !state.closed {
                state.watchers[id] = subscription
                noteWatchers(state.watchers.count)
            }
            return state.closed
        }
        if closed { subscription.close() }
        subscription.continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            state.withLock { state in
                state.watchers[id] = nil
                noteWatchers(state.watchers.count)
            }
        }
        return subscription
    }

    /// Under the lock: how many watch now, for ``offer(_:)`` and for the clients gauge.
    private func noteWatchers(_ count: Int) {
        watcherCount.store(count, ordering: .relaxed)
        clientsGauge.record(count)
    }

    /// Offers the events sent to every watcher and keeps the latest.
    func offer(_ events: RecordBuffer) {
        guard !events.isEmpty else { return }
        // Every event for watchers, each copied out (a watcher's stream holds it after the buffer is reused).
        let items = isWatched ? Self.items(of: [events], last: events.count) : []
        let latest = recentCapacity > 0 ? events.suffix(recentCapacity) : nil
        let missed = state.withLock { state in
            var missed = 0
            for watcher in state.watchers.values {
                for item in items where watcher.offer(item) { missed += 1 }
            }
            if let latest { Self.keep(latest, in: &state, capacity: recentCapacity) }
            return missed
        }
        if missed > 0 { missedCounter.increment(by: missed) }
    }

    /// Adds a batch's end to the recent events, dropping the oldest batches no longer needed for `capacity`.
    private static func keep(_ latest: RecordBuffer, in state: inout State, capacity: Int) {
        state.recent.append(latest)
        // Counted afresh: at most `capacity` batches are kept, each holding at least one event.
        var kept = state.recent.reduce(0) { $0 + $1.count }
        while let oldest = state.recent.first, kept - oldest.count >= capacity {
            state.recent.removeFirst()
            kept -= oldest.count
        }
    }

    /// The last `count` events of `batches` as items, oldest first.
    private static func items(of batches: [RecordBuffer], last count: Int) -> [Item] {
        var items: [Item] = []
        for batch in batches.reversed() where items.count < count {
            for index in stride(from: batch.count - 1, through: 0, by: -1) where items.count < count {
                items.append(Item(key: Array(batch.key(at: index)), json: Array(batch.value(at: index))))
            }
        }
        return items.reversed()
    }

    /// Ends every watcher's stream, and those of watchers that come later (the worker has stopped): a stream
    /// that waited for events would hold the HTTP server's graceful stop up.
    public func close() {
        let watchers = state.withLock { state in
            state.closed = true
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.close() }
    }
}
