public import GeoCore
public import IndexFile

/// Which country a coordinate is in, offline, from a compiled boundary index.
///
/// Exact with respect to the boundaries it was built from (Natural Earth 1:10m by default, held to 1e-7
/// degree): the answer is the one even-odd ray casting over those polygons gives, computed in integers.
/// Most of the globe answers from one or two grid lookups; near a boundary, only the few edges touching
/// that 1/16-degree subcell are tested. Points exactly on a boundary get a deterministic answer (the
/// country an infinitesimal step north of the point is in). At sea, a country whose land lies within
/// ``coastalTolerance`` metres is given instead (the nearest).
public final class CountryIndex: Sendable {
    /// A country of the index.
    public struct Country: Hashable, Sendable {
        /// ISO 3166-1 alpha-2.
        public let code: String
        /// English name.
        public let name: String
    }

    /// 12 nautical miles, the breadth of the territorial sea.
    public static let territorialSea = 22_224.0

    public let countries: [Country]
    /// How far out to sea (metres) a point still gets the nearest country's code; 0 turns it off.
    public let coastalTolerance: Double
    let tables: IndexTables
    /// For each grid cell, whether some boundary may lie within ``coastalTolerance`` of a point in it: the
    /// open ocean answers without a search.
    let cellNearLand: [Bool]
    private let countryByCode: [String: Int]

    /// Reads an index built by ``CountryIndexBuilder``; `file` names it in the errors.
    ///
    /// - Throws: ``IndexFileError`` when the bytes are not a complete, consistent index.
    public convenience init(
        bytes: [UInt8],
        file: String = "the country index",
        coastalTolerance: Double = CountryIndex.territorialSea
    ) throws(IndexFileError) {
        let contents = bytes.withUnsafeBytes { bytes in
            Result { () throws(IndexFileError) in
                var reader = IndexFileReader(bytes, file: file)
                return try Contents(reading: &reader)
            }
        }
        self.init(contents: try contents.get(), coastalTolerance: coastalTolerance)
    }

    /// Reads an index from bytes it does not keep (a mapped file, a section of the places index): the reader's
    /// bytes are the whole index.
    package convenience init(
        reading reader: inout IndexFileReader,
        coastalTolerance: Double
    ) throws(IndexFileError) {
        self.init(contents: try Contents(reading: &reader), coastalTolerance: coastalTolerance)
    }

    private init(contents: Contents, coastalTolerance: Double) {
        self.countries = contents.countries
        self.countryByCode = Dictionary(
            countries.enumerated().map { ($1.code, $0) },
            uniquingKeysWith: { first, _ in first }
        )
        self.coastalTolerance = max(0, coastalTolerance)
        tables = contents.tables
        cellNearLand = tables.cellsNearLand(within: self.coastalTolerance)
    }

    /// What the file holds, read and checked.
    private struct Contents {
        var countries: [Country] = []
        let tables: IndexTables

        init(reading reader: inout IndexFileReader) throws(IndexFileError) {
            try reader.header(magic: IndexLayout.magic, version: IndexLayout.version, kind: IndexLayout.kind)
            let countryCount = Int(try reader.u32())
            let blockCount = Int(try reader.u32())
            let mixedCount = Int(try reader.u32())
            let recordWords = Int(try reader.u32())
            let vertexCount = Int(try reader.u32())
            for _ in 0..<countryCount {
                let code = try reader.string(length: Int(try reader.u8()))
                let name = try reader.string(length: Int(try reader.u16()))
                countries.append(Country(code: code, name: name))
            }
            tables = try IndexTables(
                reading: &reader,
                countries: countryCount,
                blocks: blockCount,
                mixedSubcells: mixedCount,
                recordWords: recordWords,
                vertices: vertexCount
            )
            try reader.expectEnd()
        }
    }

    /// The same index with another coastal tolerance (metres; 0 turns it off).
    public func withCoastalTolerance(_ metres: Double) -> CountryIndex {
        CountryIndex(copying: self, coastalTolerance: metres)
    }

    /// The country at `coordinate`: on land, the one whose boundary contains it; at sea, the nearest within
    /// ``coastalTolerance``; else nil.
    public func country(at coordinate: Coordinate) -> Country? {
        countryNumber(at: coordinate).map { countries[$0] }
    }

    /// ``country(at:)`` as a position in ``countries``: for callers that keep something per country (a
    /// stream writing codes from prepared bytes) and so need no copy of the country's strings.
    public func countryNumber(at coordinate: Coordinate) -> Int? {
        let x = Self.x(coordinate.longitude)
        let y = FixedPoint.units(coordinate.latitude)
        if let number = countryNumber(x: x, y: y) { return number }
        let (row, column) = Self.cell(x: x, y: y)
        guard coastalTolerance > 0, cellNearLand[row * FixedPoint.cellColumns + column] else { return nil }
        return nearestCountry(x: x, y: y, within: coastalTolerance)
    }

    /// The country whose boundary contains the point (no coastal tolerance), as an index into `countries`.
    func countryNumber(x: Int64, y: Int64) -> Int? {
        let (row, column) = Self.cell(x: x, y: y)
        let cell = tables.cells[row * FixedPoint.cellColumns + column]
        switch cell >> 30 {
        case 0: return nil
        case 1: return Int(cell & 0x3FFF_FFFF)
        default: break
        }
        let cellX = FixedPoint.minimumX + Int64(column) * FixedPoint.cellSize
        let cellY = FixedPoint.minimumY + Int64(row) * FixedPoint.cellSize
        let subColumn = Int((x - cellX) / FixedPoint.subcellSize)
        let subRow = min(Int((y - cellY) / FixedPoint.subcellSize), Int(FixedPoint.subcellsPerCell) - 1)
        let block = Int(cell & 0x3FFF_FFFF)
        let subcell = tables.subcells[block * 256 + subRow * 16 + subColumn]
        guard subcell & 0x8000 != 0 else { return subcell == 0 ? nil : Int(subcell) - 1 }
        // From the point east to the subcell's east side, then south to its reference point R.
        let eastX = cellX + Int64(subColumn + 1) * FixedPoint.subcellSize
        let southY = cellY + Int64(subRow) * FixedPoint.subcellSize
        let mixed = Int(tables.blockBases[block]) + Int(subcell & 0x7FFF)
        return tables.records.withUnsafeBufferPointer { records in
            tables.vertices.withUnsafeBufferPointer { vertices in
                var word = Int(tables.recordStarts[mixed])
                let end = Int(tables.recordStarts[mixed + 1])
                while word < end {
                    let header = IndexLayout.CandidateHeader(word: records[word])
                    var inside = header.insideAtReference
                    let runsEnd = word + header.wordCount
                    word += 1
                    while word < runsEnd {
                        let start = Int(records[word])
                        var a = vertices[start]
                        for next in (start + 1)...(start + Int(records[word + 1])) {
                            let b = vertices[next]
                            if Crossing.eastRay(a, b, x: x, y: y) != Crossing.eastRay(a, b, x: eastX, y: y) {
                                inside.toggle()
                            }
                            if Crossing.northSegment(a, b, x: eastX, lowY: southY, highY: y) { inside.toggle() }
                            a = b
                        }
                        word += 2
                    }
                    if inside { return header.country }
                }
                return nil
            }
        }
    }

    /// The grid cell of a point: its row (from the south, the North Pole in the last) and column (from -180).
    static func cell(x: Int64, y: Int64) -> (row: Int, column: Int) {
        let column = Int((x - FixedPoint.minimumX) / FixedPoint.cellSize)
        let row = min(Int((y - FixedPoint.minimumY) / FixedPoint.cellSize), FixedPoint.cellRows - 1)
        return (row, column)
    }

    /// Longitude in units, with 180 written as -180 (the same meridian) so the grid has one column for it.
    static func x(_ longitude: Double) -> Int64 {
        let x = FixedPoint.units(longitude)
        return x >= 180 * FixedPoint.unitsPerDegree ? x - 360 * FixedPoint.unitsPerDegree : x
    }

    /// The country with this code, if the index has it.
    public func country(code: String) -> Country? { countryByCode[code].map { countries[$0] } }

    private init(copying other: CountryIndex, coastalTolerance: Double) {
        countries = other.countries
        countryByCode = other.countryByCode
        self.coastalTolerance = max(0, coastalTolerance)
        tables = other.tables
        cellNearLand = tables.cellsNearLand(within: self.coastalTolerance)
    }
}

extension CountryIndex {
    /// Bytes the index's tables take in memory.
    public var memoryFootprint: Int { tables.memoryFootprint }
}
