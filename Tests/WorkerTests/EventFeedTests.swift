import Kafka
import Metrics
import Testing

@testable import Worker

@Suite("Live event feed", .timeLimit(.minutes(5)))
struct EventFeedTests {
    /// Events as the worker sends them: `{"n":number}` for each (device, number).
    static func events(_ events: [(device: String, number: Int)]) -> RecordBuffer {
        var buffer = RecordBuffer(topic: "events")
        for (device, number) in events {
            buffer.append(key: device) { $0.append(contentsOf: "{\"n\":\(number)}".utf8) }
        }
        return buffer
    }

    @Test("a watcher that takes nothing keeps the newest events up to its buffer; the rest are counted as missed")
    func boundedBuffer() async {
        let feed = EventFeed(capacity: 3, recent: 0, metricsFactory: NOOPMetricsHandler.instance)
        #expect(!feed.isWatched)
        let stalled = feed.subscribe()
        #expect(feed.isWatched)
        feed.offer(Self.events((0..<10).map { ("d", $0) }))
        #expect(stalled.missed == 7)
        feed.close()
        var taken: [String] = []
        for await item in stalled.items { taken.append(String(decoding: item.json, as: UTF8.self)) }
        #expect(taken == [#"{"n":7}"#, #"{"n":8}"#, #"{"n":9}"#], "the newest three")
    }

    @Test("a device's watcher gets only its events; a watcher of all gets every device's")
    func filtered() async {
        let feed = EventFeed(capacity: 100, metricsFactory: NOOPMetricsHandler.instance)
        let one = feed.subscribe(deviceId: "one")
        let all = feed.subscribe()
        feed.offer(Self.events([("one", 1), ("two", 2)]))
        feed.close()
        var forOne: [String] = []
        for await item in one.items { forOne.append(item.deviceId + String(decoding: item.json, as: UTF8.self)) }
        var forAll: [String] = []
        for await item in all.items { forAll.append(item.deviceId) }
        #expect(forOne == [#"one{"n":1}"#])
        #expect(forAll == ["one", "two"])
        #expect(one.missed == 0 && all.missed == 0)
    }

    @Test("a new watcher gets the latest events first (its device's only), then the new ones, in order")
    func recentFirst() async {
        let feed = EventFeed(capacity: 100, recent: 4, metricsFactory: NOOPMetricsHandler.instance)
        feed.offer(Self.events((0..<6).map { ($0 % 2 == 0 ? "even" : "odd", $0) }))
        let all = feed.subscribe()
        let even = feed.subscribe(deviceId: "even")
        feed.offer(Self.events([("even", 6)]))
        feed.close()
        var forAll: [String] = []
        for await item in all.items { forAll.append(String(decoding: item.json, as: UTF8.self)) }
        var forEven: [String] = []
        for await item in even.items { forEven.append(String(decoding: item.json, as: UTF8.self)) }
        #expect(forAll == [#"{"n":2}"#, #"{"n":3}"#, #"{"n":4}"#, #"{"n":5}"#, #"{"n":6}"#])
        #expect(forEven == [#"{"n":2}"#, #"{"n":4}"#, #"{"n":6}"#])
    }

    @Test("the latest events a new watcher gets span the batches they were offered in, whatever their sizes")
    func recentOverBatches() async {
        let feed = EventFeed(capacity: 100, recent: 4, metricsFactory: NOOPMetricsHandler.instance)
        var number = 0
        for size in [3, 1, 1, 5, 2, 1, 1] {
            feed.offer(Self.events((number..<number + size).map { ("d", $0) }))
            number += size
        }
        let late = feed.subscribe()
        feed.offer(Self.events([]))
        feed.close()
        var taken: [String] = []
        for await item in late.items { taken.append(String(decoding: item.json, as: UTF8.self)) }
        #expect(taken == (10..<14).map { #"{"n":\#($0)}"# }, "the last four of fourteen, over three batches")
    }

    @Test("a watcher whose stream ends is forgotten; what is offered afterwards reaches the next watcher only")
    func unsubscribes() async {
        let feed = EventFeed(capacity: 10, recent: 2, metricsFactory: NOOPMetricsHandler.instance)
        let gone = feed.subscribe()
        gone.close()
        #expect(!feed.isWatched, "nobody watches once the only stream ended")
        feed.offer(Self.events([("d", 1), ("d", 2), ("d", 3)]))
        var taken: [String] = []
        for await item in gone.items { taken.append(String(decoding: item.json, as: UTF8.self)) }
        #expect(taken.isEmpty, "an ended stream gets nothing more")
        let next = feed.subscribe()
        #expect(feed.isWatched)
        feed.close()
        var latest: [String] = []
        for await item in next.items { latest.append(String(decoding: item.json, as: UTF8.self)) }
        #expect(latest == [#"{"n":2}"#, #"{"n":3}"#], "the latest two, kept while nobody watched")
    }
}
