/// Compiles country boundaries into the binary index that ``CountryIndex`` reads.
///
/// The globe is a grid of 1-degree cells; a cell that boundaries cross is split into 16 x 16 subcells.
/// Cells and subcells that no boundary touches store their country (or sea). A subcell that boundaries
/// touch stores, for each country that could be there, the edges of that country touching it and whether
/// its reference point R (its south-east corner, nudged inside) is in that country. Built twice from the
/// same boundaries, the index has the same bytes.
public enum CountryIndexBuilder {
    public static func build(_ boundaries: [CountryBoundary]) throws(CountryIndexError) -> [UInt8] {
        let sorted = boundaries.sorted { $0.code < $1.code }
        guard sorted.count < 0x7FFF else { throw CountryIndexError("too many countries") }
        let geometry = Geometry(sorted)
        let subcellEdges = geometry.edgesBySubcell()
        let mixedCells = Set(subcellEdges.keys.map { SubcellKey.cell(ofSubcell: $0) })
        var layout = IndexLayout(countries: sorted.map { ($0.code, $0.name) }, vertices: geometry.vertices)

        // Blocks of 16 x 16 subcells, numbered in cell order.
        var blockOfCell: [Int: Int] = [:]
        for cell in mixedCells.sorted() {
            blockOfCell[cell] = blockOfCell.count
        }
        layout.subcells = Array(repeating: 0, count: blockOfCell.count * 256)
        layout.cells = Array(repeating: 0, count: FixedPoint.cellColumns * FixedPoint.cellRows)
        var mixedSubcells: [Int: [IndexLayout.Candidate]] = [:]  // by position in `subcells`

        let edgesByRow = geometry.edgesByRowLine()
        let lineCount = FixedPoint.cellColumns * Int(FixedPoint.subcellsPerCell) + 1
        for row in 0..<(FixedPoint.cellRows * Int(FixedPoint.subcellsPerCell)) {
            // The countries each reference point of this row line is in, line by line from east to west.
            let inside = geometry.countriesAlongRowLine(row, edges: edgesByRow[row] ?? [], lineCount: lineCount)
            let cellRow = row / 16
            let subRow = row % 16
            for cellColumn in 0..<FixedPoint.cellColumns {
                let cell = cellRow * FixedPoint.cellColumns + cellColumn
                guard let block = blockOfCell[cell] else {
                    if subRow == 0 {
                        layout.cells[cell] = IndexLayout.entry(country: inside[(cellColumn + 1) * 16].first)
                    }
                    continue
                }
                if subRow == 0 { layout.cells[cell] = IndexLayout.entry(reference: block) }
                for subColumn in 0..<16 {
                    let position = block * 256 + subRow * 16 + subColumn
                    let atReference = inside[cellColumn * 16 + subColumn + 1]
                    let key = SubcellKey.key(row: row, column: cellColumn * 16 + subColumn)
                    guard let edges = subcellEdges[key] else {
                        layout.subcells[position] = IndexLayout.subcellEntry(country: atReference.first)
                        continue
                    }
                    var byCountry: [UInt16: [UInt32]] = [:]
                    for edge in edges {
                        byCountry[geometry.edgeCountry[Int(edge)], default: []].append(geometry.edgeStart[Int(edge)])
                    }
                    for country in atReference where byCountry[country] == nil { byCountry[country] = [] }
                    mixedSubcells[position] = byCountry.keys.sorted().map { country in
                        IndexLayout.Candidate(
                            country: country,
                            insideAtReference: atReference.contains(country),
                            edges: byCountry[country]!.sorted()
                        )
                    }
                }
            }
        }
        // Mixed subcells are numbered in position order, so each block's are consecutive from its base.
        layout.blockBases = Array(repeating: 0, count: blockOfCell.count)
        var previousBlock = -1
        for (number, position) in mixedSubcells.keys.sorted().enumerated() {
            let block = position / 256
            if block != previousBlock {
                layout.blockBases[block] = UInt32(number)
                previousBlock = block
            }
            layout.subcells[position] = IndexLayout.subcellEntry(mixed: number - Int(layout.blockBases[block]))
            let candidates = mixedSubcells[position]!
            guard candidates.allSatisfy({ $0.runs.count <= IndexLayout.maximumRuns }) else {
                throw CountryIndexError("a subcell has more boundary runs than the index format holds")
            }
            layout.mixedSubcells.append(candidates)
        }
        return layout.encoded()
    }
}

/// Subcells are keyed by row and column in the global subcell grid.
enum SubcellKey {
    static let columns = FixedPoint.cellColumns * Int(FixedPoint.subcellsPerCell)

    static func key(row: Int, column: Int) -> Int { row * columns + column }

    static func cell(ofSubcell key: Int) -> Int {
        let row = key / columns
        let column = key % columns
        return (row / 16) * FixedPoint.cellColumns + column / 16
    }
}

/// The boundaries as fixed-point rings, and the edge-to-grid computations of the build.
private struct Geometry {
    var vertices: [Vertex] = []
    /// Each edge goes from `vertices[edgeStart[e]]` to the next vertex, in country `edgeCountry[e]`.
    var edgeStart: [UInt32] = []
    var edgeCountry: [UInt16] = []

    init(_ boundaries: [CountryBoundary]) {
        for (country, boundary) in boundaries.enumerated() {
            for ring in boundary.rings {
                var points: [Vertex] = []
                for point in ring {
                    var x = FixedPoint.units(point.longitude)
                    if x >= 180 * FixedPoint.unitsPerDegree { x = 180 * FixedPoint.unitsPerDegree }
                    let vertex = Vertex(x: Int32(x), y: Int32(FixedPoint.units(point.latitude)))
                    if points.last != vertex { points.append(vertex) }
                }
                if points.count > 1 && points.first != points.last { points.append(points[0]) }
                guard points.count >= 4 else { continue }  // fewer than three corners encloses nothing
                let start = vertices.count
                vertices += points
                for index in start..<(vertices.count - 1) {
                    edgeStart.append(UInt32(index))
                    edgeCountry.append(UInt16(country))
                }
            }
        }
    }

    func ends(_ edge: Int) -> (Vertex, Vertex) {
        let start = Int(edgeStart[edge])
        return (vertices[start], vertices[start + 1])
    }

    /// The edges touching each subcell's closed rectangle (an edge along a grid line touches both sides).
    func edgesBySubcell() -> [Int: [UInt32]] {
        var result: [Int: [UInt32]] = [:]
        let size = FixedPoint.subcellSize
        let maximumColumn = SubcellKey.columns - 1
        let maximumRow = FixedPoint.cellRows * 16 - 1
        func range(_ low: Int64, _ high: Int64, origin: Int64, maximum: Int) -> ClosedRange<Int> {
            let lowOffset = low - origin
            var first = Int(lowOffset / size)
            if lowOffset % size == 0 && first > 0 { first -= 1 }  // on a grid line: the cell before touches it too
            return min(first, maximum)...min(Int((high - origin) / size), maximum)
        }
        for edge in edgeStart.indices {
            let (a, b) = ends(edge)
            let columns = range(
                Int64(min(a.x, b.x)),
                Int64(max(a.x, b.x)),
                origin: FixedPoint.minimumX,
                maximum: maximumColumn
            )
            let rows = range(
                Int64(min(a.y, b.y)),
                Int64(max(a.y, b.y)),
                origin: FixedPoint.minimumY,
                maximum: maximumRow
            )
            for row in rows {
                for column in columns {
                    let x0 = FixedPoint.minimumX + Int64(column) * size
                    let y0 = FixedPoint.minimumY + Int64(row) * size
                    if segment(a, b, touchesRectangleFrom: (x0, y0), to: (x0 + size, y0 + size)) {
                        result[SubcellKey.key(row: row, column: column), default: []].append(UInt32(edge))
                    }
                }
            }
        }
        return result
    }

    /// The edges whose span includes each subcell row line y (in the half-open sense of the east ray).
    func edgesByRowLine() -> [Int: [Int]] {
        var result: [Int: [Int]] = [:]
        let size = FixedPoint.subcellSize
        for edge in edgeStart.indices {
            let (a, b) = ends(edge)
            let low = Int64(min(a.y, b.y)) - FixedPoint.minimumY
            let high = Int64(max(a.y, b.y)) - FixedPoint.minimumY
            guard low != high else { continue }
            // Row lines y with low <= y < high.
            let first = (low + size - 1) / size
            let last = (high + size - 1) / size - 1
            guard first <= last else { continue }
            for row in Int(first)...Int(min(last, Int64(FixedPoint.cellRows * 16 - 1))) {
                result[row, default: []].append(edge)
            }
        }
        return result
    }

    /// The countries along one row line of the grid, at each of its grid lines.
    ///
    /// For each grid line x_j (j from 0 to lineCount - 1) on row line `row`, the countries (sorted) that
    /// contain the reference point (x_j + ε², y + ε): those with an odd number of edges crossing its east ray.
    func countriesAlongRowLine(_ row: Int, edges: [Int], lineCount: Int) -> [[UInt16]] {
        let y = FixedPoint.minimumY + Int64(row) * FixedPoint.subcellSize
        // Each crossing edge counts for the lines x_j west of where it crosses: j < limit.
        var events: [(limit: Int, country: UInt16)] = []
        for edge in edges {
            let (a, b) = ends(edge)
            let limit = Self.crossingLimit(a, b, y: y, lineCount: lineCount)
            if limit > 0 { events.append((limit, edgeCountry[edge])) }
        }
        events.sort { $0.limit > $1.limit }
        var result = Array(repeating: [UInt16](), count: lineCount)
        var odd: [UInt16] = []
        var next = 0
        for line in stride(from: lineCount - 1, through: 0, by: -1) {
            while next < events.count && events[next].limit > line {
                let country = events[next].country
                if let index = odd.firstIndex(of: country) { odd.remove(at: index) } else { odd.append(country) }
                next += 1
            }
            if !odd.isEmpty { result[line] = odd.sorted() }
        }
        return result
    }

    /// The number of grid lines x_j, from the west, whose east ray at y the edge crosses.
    static func crossingLimit(_ a: Vertex, _ b: Vertex, y: Int64, lineCount: Int) -> Int {
        func line(_ j: Int) -> Int64 { FixedPoint.minimumX + Int64(j) * FixedPoint.subcellSize }
        let ax = Double(a.x)
        let dx = Double(b.x) - ax
        let crossingX = ax + dx * (Double(y) - Double(a.y)) / (Double(b.y) - Double(a.y))
        var limit = max(
            0,
            min(
                lineCount,
                Int(((crossingX - Double(FixedPoint.minimumX)) / Double(FixedPoint.subcellSize)).rounded(.down)) + 1
            )
        )
        // The estimate is within a line of the truth; settle it with the exact predicate.
        while limit > 0 && !Crossing.eastRay(a, b, x: line(limit - 1), y: y) { limit -= 1 }
        while limit < lineCount && Crossing.eastRay(a, b, x: line(limit), y: y) { limit += 1 }
        return limit
    }

    /// Whether segment a-b meets the closed rectangle (separating axes: the two axes and the segment's normal).
    func segment(_ a: Vertex, _ b: Vertex, touchesRectangleFrom low: (Int64, Int64), to high: (Int64, Int64)) -> Bool {
        let dx = Int128(Int64(b.x) - Int64(a.x))
        let dy = Int128(Int64(b.y) - Int64(a.y))
        var positive = false
        var negative = false
        for corner in [(low.0, low.1), (high.0, low.1), (low.0, high.1), (high.0, high.1)] {
            let side = dx * Int128(corner.1 - Int64(a.y)) - dy * Int128(corner.0 - Int64(a.x))
            if side > 0 { positive = true } else if side < 0 { negative = true } else { return true }
        }
        return positive && negative
    }
}
