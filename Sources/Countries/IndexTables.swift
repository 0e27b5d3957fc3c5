import IndexFile

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

    /// Reads the tables and checks that every reference points inside them, so lookups cannot trap on a damaged
    /// file.
    init(
        reading reader: inout IndexFileReader,
        countries countryCount: Int,
        blocks: Int,
        mixedSubcells: Int,
        recordWords: Int,
        vertices vertexCount: Int
    ) throws(IndexFileError) {
        let cellsStart = reader.offset
        cells = try reader.array(FixedPoint.cellColumns * FixedPoint.cellRows)
        blockBases = try reader.array(blocks)
        let subcellsStart = reader.offset
        subcells = try reader.array(blocks * 256)
        let recordStartsStart = reader.offset
        recordStarts = try reader.array(mixedSubcells + 1)
        let recordsStart = reader.offset
        records = try reader.array(recordWords)
        vertices = try Self.vertices(vertexCount, from: &reader)
        let file = reader
        func damage(_ problem: String, at offset: Int) -> IndexFileError { file.failure(problem, at: offset) }
        try Self.checkCells(cells, countries: countryCount, blocks: blocks) { problem, cell throws(IndexFileError) in
            throw damage(problem, at: cellsStart + 4 * cell)
        }
        try Self.checkSubcells(subcells, blockBases: blockBases, countries: countryCount, mixed: mixedSubcells) {
            problem,
            subcell throws(IndexFileError) in throw damage(problem, at: subcellsStart + 2 * subcell)
        }
        guard recordStarts.first == 0, recordStarts.last.map({ Int($0) }) == records.count,
            zip(recordStarts, recordStarts.dropFirst()).allSatisfy({ $0 <= $1 })
        else { throw damage("the record starts are not ascending from 0 to the record words", at: recordStartsStart) }
        try Self.checkRecords(records, starts: recordStarts, countries: countryCount, vertices: vertexCount) {
            problem,
            word throws(IndexFileError) in throw damage(problem, at: recordsStart + 4 * word)
        }
        mixedRows = Self.mixedRows(subcells, blocks: blocks)
        mixedCountry = Self.mixedCountry(records, starts: recordStarts)
    }

    /// The vertices, copied in one go: each is two little-endian 32-bit integers in the file, x then y, as a
    /// ``Vertex`` lies in memory on a little-endian machine. (Read as an array of integers first, then made into
    /// vertices, the largest table of a polygon index was copied twice, in a third of its load.)
    private static func vertices(_ count: Int, from reader: inout IndexFileReader) throws(IndexFileError) -> [Vertex] {
        let (size, overflow) = count.multipliedReportingOverflow(by: 8)
        guard !overflow else { throw reader.failure("a table of \(count) vertices is larger than any file") }
        #if _endian(little)
        if MemoryLayout<Vertex>.stride == 8 && MemoryLayout<Vertex>.offset(of: \.y) == 4 {
            let bytes = try reader.take(size)
            return [Vertex](unsafeUninitializedCapacity: count) { vertices, initialized in
                UnsafeMutableRawBufferPointer(vertices).copyMemory(from: bytes)
                initialized = count
            }
        }
        #endif
        let coordinates: [Int32] = try reader.array(count * 2)
        return (0..<count).map { Vertex(x: coordinates[2 * $0], y: coordinates[2 * $0 + 1]) }
    }

    /// Bytes the tables take in memory.
    var memoryFootprint: Int {
        cells.count * 4 + blockBases.count * 4 + subcells.count * 2 + recordStarts.count * 4 + records.count * 4
            + vertices.count * MemoryLayout<Vertex>.stride + mixedRows.count * 4 + mixedCountry.count * 2
    }

    /// A cell is sea, a country, or a block.
    private static func checkCells(
        _ cells: [UInt32],
        countries: Int,
        blocks: Int,
        damaged: (String, Int) throws(IndexFileError) -> Never
    ) throws(IndexFileError) {
        try cells.withUnsafeBufferPointer { cells throws(IndexFileError) in
            for position in 0..<cells.count {
                let value = Int(cells[position] & 0x3FFF_FFFF)
                switch cells[position] >> 30 {
                case 0: continue
                case 1: if value >= countries { try damaged("a cell names country \(value) of \(countries)", position) }
                case 2: if value >= blocks { try damaged("a cell names block \(value) of \(blocks)", position) }
                default: try damaged("a cell entry of an unknown kind", position)
                }
            }
        }
    }

    /// A subcell is sea, a country, or a mixed subcell, numbered in order within its block (the coastal search
    /// relies on it).
    private static func checkSubcells(
        _ subcells: [UInt16],
        blockBases: [UInt32],
        countries: Int,
        mixed mixedCount: Int,
        damaged: (String, Int) throws(IndexFileError) -> Never
    ) throws(IndexFileError) {
        try subcells.withUnsafeBufferPointer { subcells throws(IndexFileError) in
            var rank = 0
            for position in 0..<subcells.count {
                if position % 256 == 0 { rank = 0 }
                let subcell = subcells[position]
                if subcell & 0x8000 != 0 {
                    guard Int(subcell & 0x7FFF) == rank, Int(blockBases[position / 256]) + rank < mixedCount else {
                        try damaged("a mixed subcell out of order or past the records", position)
                    }
                    rank += 1
                } else if Int(subcell) > countries {
                    try damaged("a subcell names country \(Int(subcell) - 1) of \(countries)", position)
                }
            }
        }
    }

    /// Each record is whole headers and runs, with every run's vertices inside the vertex table.
    private static func checkRecords(
        _ records: [UInt32],
        starts: [UInt32],
        countries: Int,
        vertices: Int,
        damaged: (String, Int) throws(IndexFileError) -> Never
    ) throws(IndexFileError) {
        try records.withUnsafeBufferPointer { records throws(IndexFileError) in
            for mixed in 0..<(starts.count - 1) {
                var word = Int(starts[mixed])
                let end = Int(starts[mixed + 1])
                while word < end {
                    let header = IndexLayout.CandidateHeader(word: records[word])
                    guard header.country < countries, word + header.wordCount <= end else {
                        try damaged("a subcell record's candidate names a bad country or overruns it", word)
                    }
                    for run in 0..<header.runCount {
                        let start = Int(records[word + 1 + 2 * run])
                        let count = Int(records[word + 2 + 2 * run])
                        guard count > 0, start + count < vertices else {
                            try damaged("a boundary run leaves the vertex table", word + 1 + 2 * run)
                        }
                    }
                    word += header.wordCount
                }
            }
        }
    }

    /// For each row of each block, which of its 16 subcells are mixed and how many mixed subcells come before it.
    private static func mixedRows(_ subcells: [UInt16], blocks: Int) -> [UInt32] {
        subcells.withUnsafeBufferPointer { subcells in
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
            return mixedRows
        }
    }

    /// For each mixed subcell, the one country whose edges it holds, or ``severalCountries``.
    private static func mixedCountry(_ records: [UInt32], starts: [UInt32]) -> [UInt16] {
        var countries = [UInt16](repeating: severalCountries, count: starts.count - 1)
        records.withUnsafeBufferPointer { records in
            starts.withUnsafeBufferPointer { starts in
                countries.withUnsafeMutableBufferPointer { countries in
                    for mixed in 0..<countries.count {
                        var country: UInt16?
                        var word = Int(starts[mixed])
                        let end = Int(starts[mixed + 1])
                        while word < end {
                            let header = IndexLayout.CandidateHeader(word: records[word])
                            if header.runCount > 0 && country != UInt16(header.country) {
                                if country != nil {
                                    country = nil
                                    break
                                }
                                country = UInt16(header.country)
                            }
                            word += header.wordCount
                        }
                        countries[mixed] = country ?? severalCountries
                    }
                }
            }
        }
        return countries
    }
}
