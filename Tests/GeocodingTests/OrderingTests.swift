import Foundation
import GeoCore
import TestSupport
import Testing

@testable import Geocoding

@Suite("The geocode engine's ordering: along the curve, and back to input order", .timeLimit(.minutes(5)))
struct OrderingTests {
    @Test("the curve's cells: points near each other share one; the sort keeps input order within a cell")
    func spatialOrder() throws {
        let paris = try #require(Coordinate(latitude: 48.8566, longitude: 2.3522))
        let nearParis = try #require(Coordinate(latitude: 48.86, longitude: 2.35))
        let sydney = try #require(Coordinate(latitude: -33.87, longitude: 151.21))
        let cell = { (point: Coordinate) in SpatialOrder.key(of: point) >> 18 }
        #expect(cell(paris) == cell(nearParis))
        #expect(cell(paris) != cell(sydney))

        var random = SplitMix64(seed: 3)
        let items = (0..<5_000).map { number in
            (number: number, key: UInt32(truncatingIfNeeded: random.next()))
        }
        var sorted: [(number: Int, key: UInt32)] = []
        SpatialOrder.sort(items, into: &sorted, by: \.key)
        #expect(sorted.map(\.number).sorted() == Array(0..<5_000), "every item once")
        for (before, after) in zip(sorted, sorted.dropFirst()) {
            let (cellBefore, cellAfter) = (before.key >> 18, after.key >> 18)
            #expect(cellBefore < cellAfter || (cellBefore == cellAfter && before.number < after.number))
        }
    }

    @Test("ranges written in the order given, past the system's limit of pieces a call")
    func orderedOutput() throws {
        // 3,000 pieces of one buffer, written last first: three calls' worth; the two halves of piece 1,500 follow
        // each other and go as one.
        let pieces = (0..<3_000).map { Array("piece \($0);".utf8) }
        let bytes = pieces.flatMap { $0 }
        var ranges: [Range<Int>] = []
        var start = 0
        for piece in pieces {
            ranges.append(start..<start + piece.count)
            start += piece.count
        }
        var order = Array(ranges.reversed())
        let split = order.firstIndex(of: ranges[1_500])!
        let whole = order[split]
        order.replaceSubrange(
            split...split,
            with: [whole.lowerBound..<whole.lowerBound + 3, whole.lowerBound + 3..<whole.upperBound]
        )

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ordered-\(UUID().uuidString)").path
        let file = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o600)
        try #require(file >= 0)
        defer {
            close(file)
            unlink(path)
        }
        try bytes.withUnsafeBytes { try OrderedOutput.write(order, of: $0, to: file) }
        let written = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(Array(written) == pieces.reversed().flatMap { $0 })
    }
}
