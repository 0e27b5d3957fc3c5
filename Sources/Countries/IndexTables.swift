/// The arrays of a country index, as read from its file (see ``IndexLayout`` for their meaning).
struct IndexTables: Sendable {
    let cells: [UInt32]
    let blockBases: [UInt32]
    let subcells: [UInt16]
    let recordStarts: [UInt32]
    let records: [UInt32]
    let vertices: [Vertex]
    /// Derived at load, for the coastal search: for each row of each block, which of its 16 subcells are mixed (low 16
    /// bits) and how many mixed subcells the block has before the row (high 16 bits).
    ///
    /// A mixed subcell's number is its block base plus its rank in the block, so the search reads one word per row
    /// instead of 16 subcell entries.
    let mixedRows: [UInt32]
    /// Derived at load: the one country whose edges a mixed subcell holds, or `severalCountries`.
    ///
    /// When every subcell within reach of a point at sea holds one and the same country, the first edge within the
    /// tolerance settles the answer.
    let mixedCountry: [UInt16]
    static let severalCountries: UInt16 = .max

    init(
        reading reader: inout ByteReader,
        blocks: Int,
        mixedSubcells: Int,
        recordWords: Int,
        vertices vertexCount: Int
    ) throws(CountryIndexError) {
        cells = try reader.u32s(FixedPoint.cellColumns * FixedPoint.cellRows)
        blockBases = try reader.u32s(blocks)
        subcells = try reader.u16s(blocks * 256)
        recordStarts = try reader.u32s(mixedSubcells + 1)
        records = try reader.u32s(recordWords)
        let coordinates = try reader.u32s(vertexCount * 2)
        vertices = (0..<vertexCount).map {
            Vertex(x: Int32(bitPattern: coordinates[2 * $0]), y: Int32(bitPattern: coordinates[2 * $0 + 1]))
        }
        var mixedRows: [UInt32] = []
        mixedRows.reserveCapacity(blocks * 16)
        for block in 0..<blocks {
            var before: UInt32 = 0
            for row in 0..<16 {
                var bits: UInt32 = 0
                for column in 0..<16 where subcells[block * 256 + row * 16 + column] & 0x8000 != 0 {
                    bits |= 1 << column
                }
                mixedRows.append(before << 16 | bits)
                before += UInt32(bits.nonzeroBitCount)
            }
        }
        self.mixedRows = mixedRows
        mixedCountry = (0..<mixedSubcells).map { [recordStarts, records] mixed in
            var country: UInt16?
            var word = Int(recordStarts[mixed])
            while word < Int(recordStarts[mixed + 1]) {
                let header = IndexLayout.CandidateHeader(word: records[word])
                if header.runCount > 0 && country != UInt16(header.country) {
                    if country != nil { return Self.severalCountries }
                    country = UInt16(header.country)
                }
                word += header.wordCount
            }
            return country ?? Self.severalCountries
        }
    }

    /// Bytes the tables take in memory.
    var memoryFootprint: Int {
        cells.count * 4 + blockBases.count * 4 + subcells.count * 2 + recordStarts.count * 4 + records.count * 4
            + vertices.count * MemoryLayout<Vertex>.stride + mixedRows.count * 4 + mixedCountry.count * 2
    }

    /// Checks that every reference points inside the tables, so lookups cannot trap on a damaged file.
    func validate(countryCount: Int) throws(CountryIndexError) {
        let mixedCount = recordStarts.count - 1
        for cell in cells {
            let value = Int(cell & 0x3FFF_FFFF)
            switch cell >> 30 {
            case 0: continue
            case 1: guard value < countryCount else { throw CountryIndexError("country index: bad country \(value)") }
            case 2: guard value < blockBases.count else { throw CountryIndexError("country index: bad block \(value)") }
            default: throw CountryIndexError("country index: bad cell entry")
            }
        }
        var rank = 0
        for (position, subcell) in subcells.enumerated() {
            if position % 256 == 0 { rank = 0 }
            if subcell & 0x8000 != 0 {
                // Mixed subcells are numbered in order within their block (the coastal search relies on it).
                guard Int(subcell & 0x7FFF) == rank, Int(blockBases[position / 256]) + rank < mixedCount else {
                    throw CountryIndexError("country index: bad mixed subcell reference")
                }
                rank += 1
            } else if Int(subcell) > countryCount {
                throw CountryIndexError("country index: bad country in a subcell")
            }
        }
        guard recordStarts.first == 0, recordStarts.last.map({ Int($0) }) == records.count,
            zip(recordStarts, recordStarts.dropFirst()).allSatisfy({ $0 <= $1 })
        else { throw CountryIndexError("country index: inconsistent record starts") }
        // Each record must be whole headers and runs, with every run's vertices inside the vertex table.
        for mixed in 0..<mixedCount {
            var word = Int(recordStarts[mixed])
            let end = Int(recordStarts[mixed + 1])
            while word < end {
                let header = IndexLayout.CandidateHeader(word: records[word])
                guard header.country < countryCount, word + header.wordCount <= end else {
                    throw CountryIndexError("country index: bad subcell record")
                }
                for run in 0..<header.runCount {
                    let start = Int(records[word + 1 + 2 * run])
                    let count = Int(records[word + 2 + 2 * run])
                    guard count > 0, start + count < vertices.count else {
                        throw CountryIndexError("country index: a boundary run leaves the vertex table")
                    }
                }
                word += header.wordCount
            }
        }
    }
}
