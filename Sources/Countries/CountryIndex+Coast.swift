#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CountryIndex {
    /// The country with land nearest to a point at sea, if within `metres`.
    ///
    /// Land ends at boundary edges, and boundary edges are only in mixed subcells, so the search scans the
    /// mixed subcells within reach. Distances are measured in a local equirectangular frame around the point
    /// (within 0.5 % of the great-circle distance at these ranges). Equal distances go to the country first
    /// in code order.
    func nearestCountry(x: Int64, y: Int64, within metres: Double) -> Int? {
        let metresPerUnit = 6_371_008.8 * Double.pi / 180 / Double(FixedPoint.unitsPerDegree)
        let cosine = max(cos(Double(y) / Double(FixedPoint.unitsPerDegree) * Double.pi / 180), 1e-9)
        let reachY = Int64(metres / metresPerUnit) + 1
        let reachX = min(Int64(Double(reachY) / cosine) + 1, 180 * FixedPoint.unitsPerDegree)
        let limit = metres * metres
        var best: (distance: Double, country: Int)?

        let lowRow = max(0, Int((y - reachY - FixedPoint.minimumY) / FixedPoint.cellSize))
        let highRow = min(FixedPoint.cellRows - 1, Int((y + reachY - FixedPoint.minimumY) / FixedPoint.cellSize))
        let lowColumn = Int(floorDivide(x - reachX - FixedPoint.minimumX, FixedPoint.cellSize))
        let highColumn = Int(floorDivide(x + reachX - FixedPoint.minimumX, FixedPoint.cellSize))
        let columns =
            highColumn - lowColumn + 1 >= FixedPoint.cellColumns
            ? Array(0..<FixedPoint.cellColumns) : Array(lowColumn...highColumn)
        for row in lowRow...highRow {
            for unwrapped in columns {
                let column = (unwrapped % FixedPoint.cellColumns + FixedPoint.cellColumns) % FixedPoint.cellColumns
                let cell = tables.cells[row * FixedPoint.cellColumns + column]
                guard cell >> 30 == 2 else { continue }  // no edges in a uniform cell
                let block = Int(cell & 0x3FFF_FFFF)
                // Only the subcells overlapping the reach rectangle (about 7 x 7 at the default tolerance).
                let cellX = FixedPoint.minimumX + Int64(unwrapped) * FixedPoint.cellSize  // may lie beyond ±180
                let cellY = FixedPoint.minimumY + Int64(row) * FixedPoint.cellSize
                for subRow in subcellRange(y - reachY - cellY, y + reachY - cellY) {
                    for subColumn in subcellRange(x - reachX - cellX, x + reachX - cellX) {
                        let entry = tables.subcells[block * 256 + subRow * 16 + subColumn]
                        guard entry & 0x8000 != 0 else { continue }
                        let mixed = Int(tables.blockBases[block]) + Int(entry & 0x7FFF)
                        nearestEdge(
                            in: mixed,
                            x: x,
                            y: y,
                            cosine: cosine,
                            metresPerUnit: metresPerUnit,
                            limit: limit,
                            best: &best
                        )
                    }
                }
            }
        }
        return best?.country
    }

    /// Updates `best` with the nearest edge of one mixed subcell, if nearer and within `limit` (squared metres).
    private func nearestEdge(
        in mixed: Int,
        x: Int64,
        y: Int64,
        cosine: Double,
        metresPerUnit: Double,
        limit: Double,
        best: inout (distance: Double, country: Int)?
    ) {
        for candidate in Int(tables.candidateStarts[mixed])..<Int(tables.candidateStarts[mixed + 1]) {
            let country = Int(tables.candidateCountries[candidate])
            for edge in Int(tables.edgeStarts[candidate])..<Int(tables.edgeStarts[candidate + 1]) {
                let start = Int(tables.edges[edge])
                let a = local(tables.vertices[start], from: x, y, cosine: cosine, metresPerUnit: metresPerUnit)
                let b = local(tables.vertices[start + 1], from: x, y, cosine: cosine, metresPerUnit: metresPerUnit)
                let distance = squaredDistanceToOrigin(a, b)
                guard distance <= limit else { continue }
                if best == nil || distance < best!.distance || (distance == best!.distance && country < best!.country) {
                    best = (distance, country)
                }
            }
        }
    }

    /// A vertex in metres east and north of (x, y), taking the short way round the antimeridian.
    private func local(
        _ vertex: Vertex,
        from x: Int64,
        _ y: Int64,
        cosine: Double,
        metresPerUnit: Double
    ) -> (Double, Double) {
        var dx = Int64(vertex.x) - x
        let turn = 360 * FixedPoint.unitsPerDegree
        if dx > turn / 2 { dx -= turn } else if dx < -turn / 2 { dx += turn }
        return (Double(dx) * metresPerUnit * cosine, Double(Int64(vertex.y) - y) * metresPerUnit)
    }

    /// The squared distance from the origin to segment a-b.
    private func squaredDistanceToOrigin(_ a: (Double, Double), _ b: (Double, Double)) -> Double {
        let dx = b.0 - a.0
        let dy = b.1 - a.1
        let length = dx * dx + dy * dy
        var t = length > 0 ? -(a.0 * dx + a.1 * dy) / length : 0
        t = min(1, max(0, t))
        let px = a.0 + t * dx
        let py = a.1 + t * dy
        return px * px + py * py
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
