/// Which bucket's address is asked of the provider next, and when.
///
/// It holds the asks waiting, one request in flight per bucket, the pace and the circuit breaker. The address
/// service owns one and carries out the steps it returns.
///
/// - An ask for a bucket already waiting or in flight joins it (coalesced): every asker gets the one answer.
/// - An urgent ask (a card someone is looking at) goes ahead of every ask that is not (the prefetches a catch-up makes
///   by the thousand); one for a bucket waiting as a prefetch moves it ahead.
/// - At most `capacity` buckets wait; a new one beyond that drops the oldest waiting prefetch, else the oldest urgent
///   ask (counted): when the provider is slower than the asks, the newest fixes are the ones worth an address.
/// - Asks start in the order they came, urgent ones first, no faster than the pace, and not while the breaker is open.
///
/// Pure: times are given, nothing waits here.
public struct AddressLookupQueue: Sendable {
    public let capacity: Int
    public private(set) var pacing: RequestPacing
    public private(set) var breaker: CircuitBreaker
    /// Waiting, oldest first: the urgent asks, and the others.
    private var urgent: [AddressBucket] = []
    private var waiting: [AddressBucket] = []
    private var waitingSet: Set<AddressBucket> = []
    /// Asked of the provider, not yet answered.
    public private(set) var inFlight: Set<AddressBucket> = []
    /// How many asks went unanswered since the start because newer ones took their place.
    public private(set) var dropped = 0
    /// How many asks joined one already waiting or in flight.
    public private(set) var coalesced = 0

    /// - Parameters:
    ///   - capacity: how many buckets may wait. Default: 1,000.
    ///   - pacing: how often the provider may be asked.
    ///   - breaker: when the provider is left alone.
    public init(
        capacity: Int = 1000,
        pacing: RequestPacing = RequestPacing(),
        breaker: CircuitBreaker = CircuitBreaker()
    ) {
        precondition(capacity > 0, "room for at least one ask")
        self.capacity = capacity
        self.pacing = pacing
        self.breaker = breaker
    }

    /// How many buckets wait for their turn.
    public var waitingCount: Int { urgent.count + waiting.count }

    /// What became of an ask.
    public enum Ask: Equatable, Sendable {
        /// Waits for its turn.
        case queued
        /// Joined an ask of the same bucket, waiting or in flight.
        case coalesced
        /// Waits for its turn; the oldest waiting bucket made room for it and will not be asked (its askers get no
        /// answer: the service tells them it is unavailable).
        case queuedDropping(AddressBucket)
    }

    /// Someone wants the address of `bucket`: `isUrgent` when a person waits for it (a card).
    public mutating func ask(_ bucket: AddressBucket, isUrgent: Bool = false) -> Ask {
        if inFlight.contains(bucket) || waitingSet.contains(bucket) {
            if isUrgent, let index = waiting.firstIndex(of: bucket) {
                waiting.remove(at: index)
                urgent.append(bucket)
            }
            coalesced += 1
            return .coalesced
        }
        if isUrgent { urgent.append(bucket) } else { waiting.append(bucket) }
        waitingSet.insert(bucket)
        guard waitingCount > capacity else { return .queued }
        let oldest = waiting.isEmpty ? urgent.removeFirst() : waiting.removeFirst()
        waitingSet.remove(oldest)
        dropped += 1
        return .queuedDropping(oldest)
    }

    /// What the service does next.
    public enum Step: Equatable, Sendable {
        /// Ask the provider for this bucket now.
        case send(AddressBucket)
        /// Nothing may start before this time (the pace, or the breaker's cool-down); ask again then.
        case wait(until: ContinuousClock.Instant)
        /// Nothing waits.
        case idle
    }

    /// The next step at `now`: a bucket to send (taken from the waiting ones and counted in flight), a time to wait
    /// for, or nothing.
    public mutating func next(at now: ContinuousClock.Instant) -> Step {
        guard let first = urgent.first ?? waiting.first else { return .idle }
        let start = pacing.nextStart(after: now)
        if start > now { return .wait(until: start) }
        guard breaker.allowsAsk(at: now) else {
            // Half-open: the trial's answer decides, and finished(_:succeeded:at:) asks for the next step again.
            return breaker.reopensAt.map { .wait(until: $0) } ?? .idle
        }
        if urgent.first == first { urgent.removeFirst() } else { waiting.removeFirst() }
        waitingSet.remove(first)
        inFlight.insert(first)
        pacing.noteStart(at: now)
        return .send(first)
    }

    /// The provider answered for `bucket` (`succeeded`: an address or a "none here"; else an error, a timeout or an
    /// answer that does not read).
    public mutating func finished(_ bucket: AddressBucket, succeeded: Bool, at now: ContinuousClock.Instant) {
        inFlight.remove(bucket)
        if succeeded { breaker.recordSuccess() } else { breaker.recordFailure(at: now) }
    }
}
