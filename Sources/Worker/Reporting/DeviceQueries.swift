public import GeoCore
import Synchronization

/// Questions the operations endpoints ask about the devices the worker holds, answered on the worker's loop
/// thread between two batches: the only time its devices may be read without a lock, so that reading never
/// races applying and costs the loop one atomic load while nobody asks.
///
/// A question the loop does not take within ``timeout`` (the worker is restoring a partition, backing off,
/// or not running) is answered ``Answer/busy``.
public final class DeviceQueries: Sendable {
    public enum Question: Sendable {
        /// The status card of one device, asked for at `now` (milliseconds since the epoch, for its local time).
        case statusCard(deviceId: String, now: Int64)
        /// The devices a map shows (``DeviceMapSelection``).
        case map(MapView, limit: Int)
        /// The devices nearest a point (``DeviceNearbySelection``): within `radius` metres, at most `limit`.
        case nearby(Coordinate, radius: Double, limit: Int)
        /// The fleet catalog's geofences in a map view (``CatalogView``), those with `tag` only when given.
        case catalog(MapView, tag: String?, limit: Int)
    }

    public enum Answer: Sendable {
        /// JSON for the endpoint to send.
        case json([UInt8])
        /// The devices nearest a point, for the endpoint to write (with their street addresses, when a provider is
        /// set: looked up after the loop answered).
        case nearby(DeviceNearbySelection)
        /// The device is not held here, or the catalog is off; the text says where it is, or why.
        case notHeld(String)
        /// The loop did not take the question in time.
        case busy
    }

    /// How long a question waits for the loop.
    public let timeout: Duration
    private let pending = Mutex<[Request]>([])
    private let pendingCount = Atomic<Int>(0)

    public init(timeout: Duration = .seconds(5)) {
        self.timeout = timeout
    }

    /// Asks, and waits for the loop's answer or ``timeout``.
    public func ask(_ question: Question) async -> Answer {
        let request = Request(question)
        let timeout = Task { [timeout] in
            try await Task.sleep(for: timeout)
            request.answer(.busy)
        }
        // Not left sleeping once the loop has answered.
        defer { timeout.cancel() }
        return await withCheckedContinuation { continuation in
            request.waiting(continuation)
            pending.withLock { $0.append(request) }
            pendingCount.add(1, ordering: .releasing)
        }
    }

    /// Whether questions wait (checked by the loop before it takes them).
    var hasPending: Bool { pendingCount.load(ordering: .acquiring) > 0 }

    /// Answers every waiting question with `answer` (on the loop's thread).
    func answerPending(_ answer: (Question) -> Answer) {
        let requests = pending.withLock { requests in
            defer { requests.removeAll() }
            return requests
        }
        pendingCount.subtract(requests.count, ordering: .relaxed)
        for request in requests where !request.isAnswered { request.answer(answer(request.question)) }
    }

    /// One question, its answer once given, and the continuation that waits for it: the first answer (the
    /// loop's or the timeout's) is the one, whether it comes before or after the asker starts waiting.
    private final class Request: Sendable {
        let question: Question
        private let state = Mutex<(waiting: CheckedContinuation<Answer, Never>?, answer: Answer?)>((nil, nil))

        init(_ question: Question) { self.question = question }

        var isAnswered: Bool { state.withLock { $0.answer != nil } }

        func waiting(_ continuation: CheckedContinuation<Answer, Never>) {
            let given = state.withLock { state -> Answer? in
                if state.answer == nil { state.waiting = continuation }
                return state.answer
            }
            if let given { continuation.resume(returning: given) }
        }

        func answer(_ answer: Answer) {
            let waiting = state.withLock { state -> CheckedContinuation<Answer, Never>? in
                guard state.answer == nil else { return nil }
                state.answer = answer
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume(returning: answer)
        }
    }
}
