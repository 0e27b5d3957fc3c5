#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CountryIndex {
    /// The country with land nearest to a point at sea, if within `metres`.
    func nearestCountry(x: Int64, y: Int64, within metres: Double) -> Int? {
        boundary(nearX: x, y: y, within: metres, finding: .nearestCountry).nearest?.country
    }

    /// What a search of the boundary near a point looks for.
    enum BoundarySearch {
        /// The country of the nearest edge (its distance may be larger than the nearest's once only one
        /// country is in reach: the first edge found answers).
        case nearestCountry
        /// The nearest edge and its exact distance.
        case nearestEdge
        /// The nearest edge of every country in reach.
        case everyCountry
    }

    /// Whose boundary edges lie within reach of a point.
    struct BoundaryNearby {
        /// The nearest edge within reach: its distance in metres and its country.
        var nearest: (distance: Double, country: Int)?
        /// With ``BoundarySearch/everyCountry``: the distance in metres to the nearest edge of each country.
        var distances: [Int: Double] = [:]
    }

    /// The boundary edges within `metres` of a point: the nearest (with its country), and whose they are.
    ///
    /// Boundary edges are only in mixed subcells, so the search looks at the mixed subcells within reach,
    /// nearest first, and stops at the first subcell farther away than the nearest edge found so far (an
    /// edge's nearest point lies in a subcell that lists the edge, and that subcell is no farther than the
    /// edge); with no mixed subcell in reach it tests no edge at all. Distances are measured in a local
    /// equirectangular frame around the point (within 0.5 % of the great-circle distance at these ranges).
    /// Equal distances go to the country first in code order.
    func boundary(nearX x: Int64, y: Int64, within metres: Double, finding search: BoundarySearch) -> BoundaryNearby {
        let frame = LocalFrame(x: x, y: y)
        let reachY = Int64(metres / frame.metresPerUnit) + 1
        let reachX = min(Int64(Double(reachY) / frame.cosine) + 1, 180 * FixedPoint.unitsPerDegree)
        let limit = metres * metres
        let lowRow = max(0, Int((y - reachY - FixedPoint.minimumY) / FixedPoint.cellSize))
        let highRow = min(FixedPoint.cellRows - 1, Int((y + reachY - FixedPoint.minimumY) / FixedPoint.cellSize))
        var lowColumn = Int(floorDivide(x - reachX - FixedPoint.minimumX, FixedPoint.cellSize))
        var highColumn = Int(floorDivide(x + reachX - FixedPoint.minimumX, FixedPoint.cellSize))
        if highColumn - lowColumn + 1 >= FixedPoint.cellColumns {
            (lowColumn, highColumn) = (0, FixedPoint.cellColumns - 1)
        }
        // At most this many subcells lie in reach: room for all of them, on the stack when few.
        let capacity =
            (highRow - lowRow + 1) * (highColumn - lowColumn + 1)
            * Int(FixedPoint.subcellsPerCell * FixedPoint.subcellsPerCell)
        return withUnsafeTemporaryAllocation(of: (distance: Double, mixed: Int).self, capacity: capacity) { nearby in
            var count = 0
            var onlyCountry: UInt16?  // `severalCountries` once two are in reach
            for row in lowRow...highRow {
                for unwrapped in lowColumn...highColumn {
                    let column = (unwrapped % FixedPoint.cellColumns + FixedPoint.cellColumns) % FixedPoint.cellColumns
                    let cell = tables.cells[row * FixedPoint.cellColumns + column]
                    guard cell >> 30 == 2 else { continue }  // no edges in a uniform cell
                    let block = Int(cell & 0x3FFF_FFFF)
                    let base = Int(tables.blockBases[block])
                    let cellX = FixedPoint.minimumX + Int64(unwrapped) * FixedPoint.cellSize  // may lie beyond ±180
                    let cellY = FixedPoint.minimumY + Int64(row) * FixedPoint.cellSize
                    let columns = subcellRange(x - reachX - cellX, x + reachX - cellX)
                    let columnMask = UInt32((1 << (columns.upperBound + 1)) - (1 << columns.lowerBound))
                    for subRow in subcellRange(y - reachY - cellY, y + reachY - cellY) {
                        let word = tables.mixedRows[block * 16 + subRow]
                        var bits = word & columnMask
                        while bits != 0 {
                            let subColumn = bits.trailingZeroBitCount
                            bits &= bits - 1
                            let lowX = cellX + Int64(subColumn) * FixedPoint.subcellSize
                            let lowY = cellY + Int64(subRow) * FixedPoint.subcellSize
                            let distance = frame.squaredDistance(
                                toBoxFrom: (lowX, lowY),
                                to: (lowX + FixedPoint.subcellSize, lowY + FixedPoint.subcellSize)
                            )
                            guard distance <= limit else { continue }
                            let rank = Int(word >> 16) + (word & 0xFFFF & ((1 << subColumn) - 1)).nonzeroBitCount
                            nearby[count] = (distance, base + rank)
                            count += 1
                            let country = tables.mixedCountry[base + rank]
                            if onlyCountry == nil { onlyCountry = country }
                            if onlyCountry != country { onlyCountry = IndexTables.severalCountries }
                        }
                    }
                }
            }
            if case .everyCountry = search {
                // Every edge in reach, nearest per country: all the subcells are needed.
                var squared: [Int: Double] = [:]
                for candidate in 0..<count {
                    nearestEdges(in: nearby[candidate].mixed, frame: frame, limit: limit, into: &squared)
                }
                let distances = squared.mapValues { $0.squareRoot() }
                let nearest = distances.min { ($0.value, $0.key) < ($1.value, $1.key) }
                return BoundaryNearby(nearest: nearest.map { ($0.value, $0.key) }, distances: distances)
            }
            var best: (distance: Double, country: Int)?
            let oneCountryInReach = onlyCountry != IndexTables.severalCountries
            // Nearest subcell first; usually the first one or two settle it.
            while count > 0 {
                if case .nearestCountry = search, oneCountryInReach, best != nil { break }
                var nearest = 0
                for candidate in 1..<count where nearby[candidate].distance < nearby[nearest].distance {
                    nearest = candidate
                }
                if let best, nearby[nearest].distance > best.distance { break }
                nearestEdge(in: nearby[nearest].mixed, frame: frame, limit: limit, best: &best)
                count -= 1
                nearby.swapAt(nearest, count)
            }
            return BoundaryNearby(nearest: best.map { (distance: $0.distance.squareRoot(), country: $0.country) })
        }
    }

    /// Lowers each country's squared distance in `squared` to its nearest edge in one mixed subcell within
    /// `limit` (squared metres).
    private func nearestEdges(in mixed: Int, frame: LocalFrame, limit: Double, into squared: inout [Int: Double]) {
        forEachEdge(in: mixed, frame: frame) { country, distance in
            if distance <= limit && distance < squared[country, default: .infinity] { squared[country] = distance }
        }
    }

    /// Updates `best` with the nearest edge of one mixed subcell, if nearer and within `limit` (squared metres).
    private func nearestEdge(
        in mixed: Int,
        frame: LocalFrame,
        limit: Double,
        best: inout (distance: Double, country: Int)?
    ) {
        forEachEdge(in: mixed, frame: frame) { country, distance in
            guard distance <= limit else { return }
            if best == nil || distance < best!.distance || (distance == best!.distance && country < best!.country) {
                best = (distance, country)
            }
        }
    }

    /// Calls `body` with the country and the squared distance (m²) from the frame's origin of every edge of one
    /// mixed subcell.
    @inline(__always)
    private func forEachEdge(in mixed: Int, frame: LocalFrame, _ body: (_ country: Int, _ squared: Double) -> Void) {
        var word = Int(tables.recordStarts[mixed])
        let end = Int(tables.recordStarts[mixed + 1])
        while word < end {
            let header = IndexLayout.CandidateHeader(word: tables.records[word])
            let country = header.country
            let runsEnd = word + header.wordCount
            word += 1
            while word < runsEnd {
                let start = Int(tables.records[word])
                // A run's edges share their ends: each vertex goes into the local frame once.
                var a = frame.local(tables.vertices[start])
                for next in (start + 1)...(start + Int(tables.records[word + 1])) {
                    let b = frame.local(tables.vertices[next])
                    body(country, LocalFrame.squaredDistanceToOrigin(a, b))
                    a = b
                }
                word += 2
            }
        }
    }

    /// The subcell indices (0...15) that a span of offsets from a cell's edge overlaps.
    private func subcellRange(_ low: Int64, _ high: Int64) -> ClosedRange<Int> {
        let first = max(0, Int(floorDivide(low, FixedPoint.subcellSize)))
        let last = min(15, Int(floorDivide(high, FixedPoint.subcellSize)))
        return first...max(first, last)
    }

    private func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        let (quotient, remainder) = value.quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }
}

extension IndexTables {
    /// For each cell, whether a boundary edge may lie within `metres` of some point of it, that is whether a
    /// mixed cell lies within reach (with the east-west reach taken at the band's highest latitude, so it is
    /// never less than a lookup's own).
    func cellsNearLand(within metres: Double) -> [Bool] {
        let columns = FixedPoint.cellColumns
        guard metres > 0 else { return Array(repeating: false, count: cells.count) }
        // Mixed cells before each column of each row (one extra column: prefix sums).
        var mixedBefore = Array(repeating: 0, count: FixedPoint.cellRows * (columns + 1))
        for row in 0..<FixedPoint.cellRows {
            for column in 0..<columns {
                let mixed = cells[row * columns + column] >> 30 == 2 ? 1 : 0
                mixedBefore[row * (columns + 1) + column + 1] = mixedBefore[row * (columns + 1) + column] + mixed
            }
        }
        func mixedCount(row: Int, from first: Int, through last: Int) -> Int {
            guard last - first + 1 < columns else { return mixedBefore[row * (columns + 1) + columns] }
            let low = (first % columns + columns) % columns
            let high = (last % columns + columns) % columns
            let base = row * (columns + 1)
            if low <= high { return mixedBefore[base + high + 1] - mixedBefore[base + low] }
            return mixedBefore[base + columns] - mixedBefore[base + low] + mixedBefore[base + high + 1]
        }
        let reachDegrees = metres / LocalFrame.metresPerDegree
        var result = Array(repeating: false, count: cells.count)
        for row in 0..<FixedPoint.cellRows {
            let south = Double(row) - 90 - reachDegrees
            let north = Double(row) - 89 + reachDegrees
            let rows =
                max(0, Int(south.rounded(.down)) + 90)...min(FixedPoint.cellRows - 1, Int(north.rounded(.down)) + 90)
            let highestLatitude = min(90, max(abs(south), abs(north)))
            let cosine = cos(highestLatitude * Double.pi / 180)
            let reachColumns = cosine < 1e-6 ? columns : Int((reachDegrees / cosine).rounded(.up)) + 1
            for column in 0..<columns {
                result[row * columns + column] = rows.contains { band in
                    mixedCount(row: band, from: column - reachColumns, through: column + reachColumns) > 0
                }
            }
        }
        return result
    }
}

/// Metres east and north of a point, in an equirectangular frame around it.
struct LocalFrame {
    static let metresPerDegree = 6_371_008.8 * Double.pi / 180

    let x: Int64
    let y: Int64
    /// Metres per unit north; east, times `cosine`.
    let metresPerUnit = LocalFrame.metresPerDegree / Double(FixedPoint.unitsPerDegree)
    let cosine: Double

    init(x: Int64, y: Int64) {
        self.x = x
        self.y = y
        cosine = max(cos(Double(y) / Double(FixedPoint.unitsPerDegree) * Double.pi / 180), 1e-9)
    }

    /// The squared distance (m²) from the point to the segment a-b, taking the short way round the antimeridian.
    func squaredDistance(toSegment a: Vertex, _ b: Vertex) -> Double {
        Self.squaredDistanceToOrigin(local(a), local(b))
    }

    /// The squared distance from the frame's origin to the segment between two local points.
    static func squaredDistanceToOrigin(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let (ax, ay) = a
        let (bx, by) = b
        let dx = bx - ax
        let dy = by - ay
        let length = dx * dx + dy * dy
        let t = length > 0 ? min(1, max(0, -(ax * dx + ay * dy) / length)) : 0
        let px = ax + t * dx
        let py = ay + t * dy
        return px * px + py * py
    }

    /// The squared distance (m²) from the point to a rectangle given in unwrapped units (it may lie beyond ±180).
    func squaredDistance(toBoxFrom low: (Int64, Int64), to high: (Int64, Int64)) -> Double {
        let dx = Double(max(0, low.0 - x, x - high.0)) * metresPerUnit * cosine
        let dy = Double(max(0, low.1 - y, y - high.1)) * metresPerUnit
        return dx * dx + dy * dy
    }

    /// A vertex in the frame: metres east and north.
    func local(_ vertex: Vertex) -> (Double, Double) {
        var dx = Int64(vertex.x) - x
        let turn = 360 * FixedPoint.unitsPerDegree
        if dx > turn / 2 { dx -= turn } else if dx < -turn / 2 { dx += turn }
        return (Double(dx) * metresPerUnit * cosine, Double(Int64(vertex.y) - y) * metresPerUnit)
    }
}
