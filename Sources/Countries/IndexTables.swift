/// The arrays of a country index, as read from its file (see ``IndexLayout`` for their meaning).
struct IndexTables: Sendable {
    let cells: [UInt32]
    let blockBases: [UInt32]
    let subcells: [UInt16]
    let candidateStarts: [UInt32]
    let candidateCountries: [UInt16]
    let candidateInside: [UInt8]
    let edgeStarts: [UInt32]
    let edges: [UInt32]
    let vertices: [Vertex]

    init(
        reading reader: inout ByteReader,
        blocks: Int,
        mixedSubcells: Int,
        candidates: Int,
        edges edgeCount: Int,
        vertices vertexCount: Int
    ) throws(CountryIndexError) {
        cells = try reader.u32s(FixedPoint.cellColumns * FixedPoint.cellRows)
        blockBases = try reader.u32s(blocks)
        subcells = try reader.u16s(blocks * 256)
        candidateStarts = try reader.u32s(mixedSubcells + 1)
        candidateCountries = try reader.u16s(candidates)
        candidateInside = Array(try reader.take(candidates))
        edgeStarts = try reader.u32s(candidates + 1)
        edges = try reader.u32s(edgeCount)
        let coordinates = try reader.u32s(vertexCount * 2)
        vertices = (0..<vertexCount).map {
            Vertex(x: Int32(bitPattern: coordinates[2 * $0]), y: Int32(bitPattern: coordinates[2 * $0 + 1]))
        }
    }

    /// Bytes the tables take in memory.
    var memoryFootprint: Int {
        cells.count * 4 + blockBases.count * 4 + subcells.count * 2 + candidateStarts.count * 4
            + candidateCountries.count * 2 + candidateInside.count + edgeStarts.count * 4 + edges.count * 4
            + vertices.count * MemoryLayout<Vertex>.stride
    }

    /// Checks that every reference points inside the tables, so lookups cannot trap on a damaged file.
    func validate(countryCount: Int) throws(CountryIndexError) {
        let mixedCount = candidateStarts.count - 1
        for cell in cells {
            let value = Int(cell & 0x3FFF_FFFF)
            switch cell >> 30 {
            case 0: continue
            case 1: guard value < countryCount else { throw CountryIndexError("country index: bad country \(value)") }
            case 2: guard value < blockBases.count else { throw CountryIndexError("country index: bad block \(value)") }
            default: throw CountryIndexError("country index: bad cell entry")
            }
        }
        for (position, subcell) in subcells.enumerated() {
            if subcell & 0x8000 != 0 {
                guard Int(blockBases[position / 256]) + Int(subcell & 0x7FFF) < mixedCount else {
                    throw CountryIndexError("country index: bad mixed subcell reference")
                }
            } else if Int(subcell) > countryCount {
                throw CountryIndexError("country index: bad country in a subcell")
            }
        }
        guard candidateStarts.last.map({ Int($0) }) == candidateCountries.count,
            zip(candidateStarts, candidateStarts.dropFirst()).allSatisfy({ $0 <= $1 }),
            candidateCountries.allSatisfy({ Int($0) < countryCount }),
            edgeStarts.last.map({ Int($0) }) == edges.count,
            zip(edgeStarts, edgeStarts.dropFirst()).allSatisfy({ $0 <= $1 }),
            edges.allSatisfy({ Int($0) + 1 < vertices.count })
        else { throw CountryIndexError("country index: inconsistent tables") }
    }
}
