import Addresses
import GeoCore
import Testing

@Suite("Address buckets: the squares the address lookups and cache work in", .timeLimit(.minutes(5)))
struct AddressBucketTests {
    private func point(_ latitude: Double, _ longitude: Double) -> Coordinate {
        Coordinate(latitude: latitude, longitude: longitude)!
    }

    @Test("a device moving within a block stays in its bucket; one a bucket away does not")
    func sameBlock() {
        // Monte-Carlo's casino square, 100 m buckets.
        let casino = AddressBucket(point(43.73965, 7.42770), meters: 100)
        let center = casino.center
        #expect(AddressBucket(center, meters: 100) == casino)
        #expect(center.distance(to: point(43.73965, 7.42770)) < 100)
        let east = Coordinate(latitude: center.latitude, longitude: center.longitude + 0.0013)!  // about 105 m
        #expect(AddressBucket(east, meters: 100) != casino)
        #expect(AddressBucket(point(43.73965, 7.42770), meters: 50) != casino, "the size is part of the bucket")
    }

    @Test(
        "a bucket is about as wide as it is tall, and its centre lies in it",
        arguments: [
            (0.0, 0.0), (43.74, 7.42), (-33.87, 151.21), (64.15, -21.94), (78.22, 15.65), (89.9999, 10.0),
            (-89.9999, -170.0), (12.0, 179.99999), (12.0, -180.0),
        ]
    )
    func shape(latitude: Double, longitude: Double) {
        let bucket = AddressBucket(point(latitude, longitude), meters: 100)
        let center = bucket.center
        #expect(AddressBucket(center, meters: 100) == bucket)
        // The point lies within the bucket's half-diagonal of its centre (with room for the band's curvature).
        if abs(latitude) < 89 {
            #expect(center.distance(to: point(latitude, longitude)) <= 75)
        }
        #expect(AddressBucket(meters: 100, row: bucket.row, column: bucket.column) == bucket)
    }

    @Test("parts that name no bucket are refused")
    func refusesParts() {
        #expect(AddressBucket(meters: 0, row: 0, column: 0) == nil)
        #expect(AddressBucket(meters: 100, row: -1, column: 0) == nil)
        #expect(AddressBucket(meters: 100, row: 1_000_000, column: 0) == nil)
        let equator = AddressBucket(point(0, 0), meters: 100)
        #expect(AddressBucket(meters: 100, row: equator.row, column: 1_000_000) == nil)
    }
}
