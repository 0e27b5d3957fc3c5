import Addresses
import GeoCore
import Testing

@Suite("The address lookups' queue: coalescing, the pace, the bound, the breaker", .timeLimit(.minutes(5)))
struct AddressLookupQueueTests {
    private let start = ContinuousClock.now

    private func bucket(_ index: Int) -> AddressBucket {
        AddressBucket(Coordinate(latitude: 43.73, longitude: 7.40 + Double(index) * 0.01)!, meters: 100)
    }

    @Test("many asks for one bucket make one request")
    func coalesces() {
        var queue = AddressLookupQueue()
        #expect(queue.ask(bucket(0)) == .queued)
        for _ in 0..<9 { #expect(queue.ask(bucket(0)) == .coalesced) }
        #expect(queue.next(at: start) == .send(bucket(0)))
        #expect(queue.ask(bucket(0)) == .coalesced, "in flight: joins it")
        #expect(queue.next(at: start + .seconds(5)) == .idle)
        #expect(queue.coalesced == 10)
        queue.finished(bucket(0), succeeded: true, at: start + .seconds(1))
        #expect(queue.ask(bucket(0)) == .queued, "answered: a new ask (the cache decides whether it is needed)")
    }

    @Test("asks start no faster than the pace, in the order they came")
    func paces() {
        var queue = AddressLookupQueue(pacing: RequestPacing(maxRequestsPerSecond: 2))
        for index in 0..<3 { _ = queue.ask(bucket(index)) }
        #expect(queue.next(at: start) == .send(bucket(0)))
        #expect(queue.next(at: start + .milliseconds(100)) == .wait(until: start + .milliseconds(500)))
        #expect(queue.next(at: start + .milliseconds(500)) == .send(bucket(1)))
        #expect(queue.next(at: start + .milliseconds(1200)) == .send(bucket(2)))
        #expect(queue.next(at: start + .milliseconds(1200)) == .idle)
    }

    @Test("beyond its capacity the queue drops the oldest waiting ask, and counts it")
    func dropsOldest() {
        var queue = AddressLookupQueue(capacity: 2)
        #expect(queue.ask(bucket(0)) == .queued)
        #expect(queue.ask(bucket(1)) == .queued)
        #expect(queue.ask(bucket(2)) == .queuedDropping(bucket(0)))
        #expect(queue.dropped == 1)
        #expect(queue.waitingCount == 2)
        #expect(queue.next(at: start) == .send(bucket(1)))
        #expect(queue.ask(bucket(0)) == .queued, "a dropped bucket can be asked again")
    }

    @Test(
        "a card's ask goes ahead of the prefetches waiting, moves a prefetch of its bucket ahead, and is dropped last"
    )
    func cardsFirst() {
        var queue = AddressLookupQueue(capacity: 3, pacing: RequestPacing(maxRequestsPerSecond: 1_000))
        for index in 0..<3 { #expect(queue.ask(bucket(index)) == .queued) }
        #expect(queue.ask(bucket(9), isUrgent: true) == .queuedDropping(bucket(0)), "a prefetch makes room")
        #expect(queue.ask(bucket(2), isUrgent: true) == .coalesced, "a card for a bucket waiting as a prefetch")
        #expect(queue.next(at: start) == .send(bucket(9)))
        #expect(queue.next(at: start + .seconds(1)) == .send(bucket(2)), "moved ahead of bucket 1")
        #expect(queue.next(at: start + .seconds(2)) == .send(bucket(1)))
        for index in 10..<13 { _ = queue.ask(bucket(index), isUrgent: true) }
        #expect(queue.ask(bucket(20)) == .queuedDropping(bucket(20)), "only cards wait: a prefetch gets no room")
        #expect(queue.ask(bucket(13), isUrgent: true) == .queuedDropping(bucket(10)), "the oldest card goes")
        #expect(queue.next(at: start + .seconds(3)) == .send(bucket(11)))
    }

    @Test("failures in a row open the breaker; after the cool-down one trial decides")
    func breaker() {
        var queue = AddressLookupQueue(
            pacing: RequestPacing(maxRequestsPerSecond: 1000),
            breaker: CircuitBreaker(threshold: 3, coolDown: .seconds(30))
        )
        var now = start
        for index in 0..<3 {
            _ = queue.ask(bucket(index))
            #expect(queue.next(at: now) == .send(bucket(index)))
            queue.finished(bucket(index), succeeded: false, at: now)
            now += .seconds(1)
        }
        #expect(queue.breaker.state == .open)
        _ = queue.ask(bucket(3))
        _ = queue.ask(bucket(4))
        let reopens = start + .seconds(2) + .seconds(30)
        #expect(queue.next(at: now) == .wait(until: reopens))
        // The trial fails: open again for another cool-down.
        #expect(queue.next(at: reopens) == .send(bucket(3)))
        #expect(queue.breaker.state == .halfOpen)
        #expect(queue.next(at: reopens + .seconds(1)) == .idle, "one trial at a time")
        queue.finished(bucket(3), succeeded: false, at: reopens + .seconds(1))
        #expect(queue.breaker.state == .open)
        #expect(queue.next(at: reopens + .seconds(2)) == .wait(until: reopens + .seconds(31)))
        // The next trial succeeds: closed, and the rest goes on.
        #expect(queue.next(at: reopens + .seconds(31)) == .send(bucket(4)))
        queue.finished(bucket(4), succeeded: true, at: reopens + .seconds(32))
        #expect(queue.breaker.state == .closed)
        #expect(queue.breaker.failures == 0)
    }

    @Test("a success between failures keeps the breaker closed")
    func successResets() {
        var breaker = CircuitBreaker(threshold: 2)
        breaker.recordFailure(at: start)
        breaker.recordSuccess()
        breaker.recordFailure(at: start)
        #expect(breaker.state == .closed)
        breaker.recordFailure(at: start)
        #expect(breaker.state == .open)
        let allowed = breaker.allowsAsk(at: start + .seconds(29))
        #expect(!allowed)
    }
}
