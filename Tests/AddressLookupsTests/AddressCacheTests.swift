import AddressLookups
import Addresses
import Foundation
import GeoCore
import Testing

@Suite(
    "The address cache: answers by bucket in addresses.sqlite, kept across restarts, least recently used go first",
    .timeLimit(.minutes(5))
)
struct AddressCacheTests {
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("addresses-\(UUID())").path
    private let hermitage = StreetAddress(
        label: "Avenue de l'Hermitage, Monte-Carlo, Monaco, 98000, Monaco",
        road: "Avenue de l'Hermitage",
        suburb: "Monte-Carlo",
        city: "Monaco",
        postcode: "98000",
        country: "Monaco",
        countryCode: "MC"
    )

    private func bucket(_ index: Int) -> AddressBucket {
        AddressBucket(Coordinate(latitude: 43.7384, longitude: 7.4246 + Double(index) * 0.01)!, meters: 100)
    }

    @Test("an answer is kept with its times, expired or not, and survives reopening the file")
    func keepsAcrossRestarts() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let entry = AddressCache.Entry(address: hermitage, fetchedAt: 1_000, expiresAt: 5_000)
        do {
            let cache = try AddressCache(directory: directory)
            #expect(try cache.entry(for: bucket(0), now: 1_000) == nil)
            try cache.store(entry, for: bucket(0), now: 1_000)
            try cache.store(
                AddressCache.Entry(address: nil, fetchedAt: 1_000, expiresAt: 5_000),
                for: bucket(1),
                now: 1_000
            )
        }
        let reopened = try AddressCache(directory: directory)
        let kept = try #require(try reopened.entry(for: bucket(0), now: 9_000))
        #expect(kept == entry)
        #expect(kept.isExpired(at: 9_000))
        #expect(!kept.isExpired(at: 4_999))
        #expect(try reopened.entry(for: bucket(1), now: 9_000)?.address == nil, "'no address here' is an answer too")
        #expect(try reopened.entry(for: bucket(1), now: 9_000) != nil)
        #expect(
            try reopened.entry(
                for: AddressBucket(Coordinate(latitude: 43.7384, longitude: 7.4246)!, meters: 50),
                now: 9_000
            ) == nil
        )
    }

    @Test("beyond its capacity the least recently used answers go, a read counting as a use")
    func evictsLeastRecentlyUsed() throws {
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try AddressCache(directory: directory, capacity: 3)
        for index in 0..<3 {
            try cache.store(
                AddressCache.Entry(address: hermitage, fetchedAt: 0, expiresAt: 100),
                for: bucket(index),
                now: Int64(index)
            )
        }
        _ = try cache.entry(for: bucket(0), now: 10)  // bucket 1 is now the least recently used
        try cache.store(AddressCache.Entry(address: hermitage, fetchedAt: 11, expiresAt: 100), for: bucket(3), now: 11)
        #expect(try cache.count() == 3)
        #expect(try cache.entry(for: bucket(1), now: 12) == nil)
        for index in [0, 2, 3] { #expect(try cache.entry(for: bucket(index), now: 12) != nil) }
    }
}
