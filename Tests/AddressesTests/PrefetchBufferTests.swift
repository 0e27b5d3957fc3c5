import GeoCore
import Testing

@testable import Addresses

@Suite(
    "The prefetches waiting for the address service: each bucket once, the newest kept, the overflow said",
    .timeLimit(.minutes(5))
)
struct PrefetchBufferTests {
    private func bucket(_ index: Int) -> AddressBucket {
        AddressBucket(Coordinate(latitude: 43.73, longitude: 7.40 + Double(index) * 0.01)!, meters: 100)
    }

    @Test("below its capacity it keeps every bucket once, in order, and a take empties it")
    func keeps() {
        var buffer = PrefetchBuffer(capacity: 4)
        #expect(buffer.isEmpty)
        for index in 0..<3 { #expect(buffer.add(bucket(index)) == .added) }
        #expect(buffer.add(bucket(1)) == .waiting, "entered again before the take: waits once")
        #expect(!buffer.isEmpty)
        #expect(buffer.take() == [bucket(0), bucket(1), bucket(2)])
        #expect(buffer.isEmpty && buffer.take().isEmpty)
        #expect(buffer.add(bucket(1)) == .added, "taken: a new entry waits again")
    }

    @Test("beyond its capacity the oldest make room for the newest, each one said, and a take gives them oldest first")
    func overwritesOldest() {
        var buffer = PrefetchBuffer(capacity: 3)
        let additions = (0..<8).map { buffer.add(bucket($0)) }
        #expect(additions == [.added, .added, .added] + Array(repeating: .addedDroppingOldest, count: 5))
        #expect(buffer.add(bucket(0)) == .addedDroppingOldest, "dropped earlier: no longer waiting")
        #expect(buffer.take() == [bucket(6), bucket(7), bucket(0)])
        #expect(buffer.add(bucket(9)) == .added, "emptied by the take")
        #expect(buffer.take() == [bucket(9)])
    }
}
