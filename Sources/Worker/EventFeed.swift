import Kafka
public import Metrics
import Synchronization

/// The events the worker produces, offered to live watchers (the page's Server-Sent Events stream) as they
/// are sent.
///
/// A watcher never slows the worker: each has a bounded buffer, and when it does not keep up the oldest
/// events it has not taken are dropped and counted (``Subscription/missed``, and the
/// `geoworker_event_stream_missed_total` metric). With nobody watching, offering costs one atomic load.
public final class EventFeed: Sendable {
    /// One live event: its device and its CloudEvent JSON, as the events topic got it.
    public struct Item: Sendable {
        public let deviceId: String
        public let json: [UInt8]
    }

    /// One watcher's view of the feed.
    public final class Subscription: Sendable {
        /// The events, in the order they were sent, as this watcher takes them.
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

        fileprivate func offer(_ item: Item) -> Bool {
            if let deviceId, deviceId != item.deviceId { return true }
            if case .dropped = continuation.yield(item) {
                missedCount.add(1, ordering: .relaxed)
                return false
            }
            return true
        }
    }

    /// Events a watcher may have waiting before the oldest are dropped.
    public let capacity: Int
    private let watchers = Mutex<[ObjectIdentifier: Subscription]>([:])
    private let watcherCount = Atomic<Int>(0)
    private let missedCounter: Counter

    /// - Parameter metricsFactory: where the missed-events counter goes. Default: the process's factory.
    public init(capacity: Int = 1000, metricsFactory: any MetricsFactory = MetricsSystem.factory) {
        precondition(capacity > 0, "a watcher buffers at least one event")
        self.capacity = capacity
        missedCounter = Counter(label: "geoworker_event_stream_missed_total", factory: metricsFactory)
    }

    /// Whether anybody watches: the worker skips offering when nobody does.
    public var isWatched: Bool { watcherCount.load(ordering: .relaxed) > 0 }

    /// A new watcher of every event, or of one device's; it stays until its stream is dropped or finished.
    public func subscribe(deviceId: String? = nil) -> Subscription {
        let subscription = Subscription(deviceId: deviceId, capacity: capacity)
        let id = ObjectIdentifier(subscription)
        watchers.withLock { $0[id] = subscription }
        watcherCount.add(1, ordering: .relaxed)
        subscription.continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return subscription
    }

    private func unsubscribe(_ id: ObjectIdentifier) {
        let removed = watchers.withLock { $0.removeValue(forKey: id) }
        if removed != nil { watcherCount.subtract(1, ordering: .relaxed) }
    }

    /// Offers the records sent to the events topic to every watcher.
    func offer(_ records: [ProducerRecord], eventsTopic: String) {
        guard isWatched else { return }
        let items = records.compactMap { record -> Item? in
            guard record.topic == eventsTopic, let key = record.key, let value = record.value else { return nil }
            return Item(deviceId: String(decoding: key, as: UTF8.self), json: value)
        }
        guard !items.isEmpty else { return }
        let current = watchers.withLock { Array($0.values) }
        var missed = 0
        for watcher in current {
            for item in items where !watcher.offer(item) { missed += 1 }
        }
        if missed > 0 { missedCounter.increment(by: missed) }
    }

    /// Ends every watcher's stream (the worker is stopping).
    public func finish() {
        let current = watchers.withLock { Array($0.values) }
        for watcher in current { watcher.continuation.finish() }
    }
}
