import Addresses
import Metrics

/// The address lookups' metrics on `/metrics`: how often the cache answered, what the provider was asked and how it
/// answered, what was coalesced or dropped, the queue and the breaker.
struct AddressMetrics: Sendable {
    /// Asks the cache answered (current or stale).
    private let hits = Counter(label: "geoworker_address_cache_hits_total")
    /// Asks the cache had nothing for.
    private let misses = Counter(label: "geoworker_address_cache_misses_total")
    /// Requests sent to the provider.
    private let requests = Counter(label: "geoworker_address_requests_total")
    /// Asks that joined one already waiting or in flight for their bucket.
    private let coalesced = Counter(label: "geoworker_address_asks_coalesced_total")
    /// Asks dropped because too many waited (the oldest go).
    private let dropped = Counter(label: "geoworker_address_asks_dropped_total")
    /// Buckets waiting for a request.
    private let queueLength = Gauge(label: "geoworker_address_queue_length")
    /// 0 closed, 1 half-open, 2 open.
    private let breakerState = Gauge(label: "geoworker_address_breaker_state")

    func hit(_ count: Int = 1) { hits.increment(by: count) }
    func miss(_ count: Int = 1) { misses.increment(by: count) }
    func request() { requests.increment() }
    func coalesce() { coalesced.increment() }
    func drop() { dropped.increment() }
    func queue(waiting: Int) { queueLength.record(waiting) }

    func answers(found: Bool) {
        Counter(label: "geoworker_address_answers_total", dimensions: [("result", found ? "address" : "none")])
            .increment()
    }

    /// A failed request, by `reason`: `http-status`, `timeout`, `malformed`, `connection`.
    func errors(_ reason: String) {
        Counter(label: "geoworker_address_errors_total", dimensions: [("reason", reason)]).increment()
    }

    func breaker(_ state: CircuitBreaker.State) {
        switch state {
        case .closed: breakerState.record(0)
        case .halfOpen: breakerState.record(1)
        case .open: breakerState.record(2)
        }
    }
}
