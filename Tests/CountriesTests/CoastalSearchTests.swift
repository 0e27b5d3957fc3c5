import GeoCore
import TestSupport
import Testing

@testable import Countries

@Suite("Coastal search against an exhaustive scan", .timeLimit(.minutes(5)))
struct CoastalSearchTests {
    /// The nearest country by testing every edge of every mixed subcell in reach: no ordering, no pruning,
    /// no early exit, subcells found through their entries rather than the derived row masks.
    func exhaustiveNearest(_ index: CountryIndex, x: Int64, y: Int64, within metres: Double) -> Int? {
        let tables = index.tables
        let frame = LocalFrame(x: x, y: y)
        let reach = Int64(metres / frame.metresPerUnit) + 1
        let reachX = Int64(Double(reach) / frame.cosine) + 1
        var best: (distance: Double, country: Int)?
        let size = FixedPoint.subcellSize
        var subRow = (y - reach - FixedPoint.minimumY) / size
        while subRow <= (y + reach - FixedPoint.minimumY) / size {
            defer { subRow += 1 }
            guard subRow >= 0, subRow < Int64(FixedPoint.cellRows) * 16 else { continue }
            let columns = Int64(FixedPoint.cellColumns) * 16
            var subColumn = (x - reachX - FixedPoint.minimumX) / size - 1
            while subColumn <= (x + reachX - FixedPoint.minimumX) / size + 1 {
                defer { subColumn += 1 }
                let wrapped = (subColumn % columns + columns) % columns
                let cell = tables.cells[Int(subRow / 16) * FixedPoint.cellColumns + Int(wrapped / 16)]
                guard cell >> 30 == 2 else { continue }
                let block = Int(cell & 0x3FFF_FFFF)
                let entry = tables.subcells[block * 256 + Int(subRow % 16) * 16 + Int(wrapped % 16)]
                guard entry & 0x8000 != 0 else { continue }
                let mixed = Int(tables.blockBases[block]) + Int(entry & 0x7FFF)
                var word = Int(tables.recordStarts[mixed])
                while word < Int(tables.recordStarts[mixed + 1]) {
                    let header = IndexLayout.CandidateHeader(word: tables.records[word])
                    let country = header.country
                    for run in 0..<header.runCount {
                        let start = Int(tables.records[word + 1 + 2 * run])
                        for edge in start..<(start + Int(tables.records[word + 2 + 2 * run])) {
                            let distance = frame.squaredDistance(
                                toSegment: tables.vertices[edge],
                                tables.vertices[edge + 1]
                            )
                            guard distance <= metres * metres else { continue }
                            if best == nil || distance < best!.distance
                                || (distance == best!.distance && country < best!.country)
                            {
                                best = (distance, country)
                            }
                        }
                    }
                    word += header.wordCount
                }
            }
        }
        return best?.country
    }

    @Test(
        "the nearest-first search with its shortcuts gives the exhaustive answer",
        arguments: [CountryIndex.territorialSea, 5_000, 40_000]
    )
    func agreesWithExhaustiveScan(tolerance: Double) {
        let index = bundledIndex.withCoastalTolerance(tolerance)
        var random = SplitMix64(seed: 11)
        var checked = 0
        var found = 0
        // Points at sea within 50 km of land, spread over the globe (many near two countries' coasts).
        while checked < 1_500 {
            let coordinate = Coordinate(
                latitude: Double.random(in: -80...84, using: &random),
                longitude: Double.random(in: -180..<180, using: &random)
            )!
            let x = CountryIndex.x(coordinate.longitude)
            let y = FixedPoint.units(coordinate.latitude)
            guard index.countryNumber(x: x, y: y) == nil,
                index.nearestCountry(x: x, y: y, within: 50_000) != nil
            else { continue }
            checked += 1
            let expected = exhaustiveNearest(index, x: x, y: y, within: tolerance)
            if expected != nil { found += 1 }
            // Through the public lookup, so the open-ocean shortcut is checked too.
            #expect(
                index.country(at: coordinate)?.code == expected.map { index.countries[$0].code },
                "\(coordinate.latitude), \(coordinate.longitude)"
            )
        }
        // The sample must exercise both answers: some points within the tolerance, some beyond it.
        #expect(found > 100 && found < checked)
    }
}
