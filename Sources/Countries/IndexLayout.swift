import IndexFile

/// The index's arrays, and their file format.
///
/// Little-endian:
///
///     "GWCI", version (u32), counts: countries, blocks, mixed subcells, record words, vertices (u32 each)
///     countries: code length (u8), code, name length (u16), name (UTF-8)
///     cells: 360 x 180 entries (u32), row by row from the south-west
///     block bases: the number of each block's first mixed subcell (u32 per block)
///     subcells: blocks x 256 entries (u16): 0 sea, country + 1, or 0x8000 | mixed subcell - block base
///     record starts: mixed subcells + 1 (u32), where each mixed subcell's record begins in the record words
///     record words (u32): for each candidate country of the subcell, a header
///         country | insideAtReference << 16 | number of runs << 17
///       then for each run, its first vertex and its number of edges (a run is consecutive edges of one ring)
///     vertices: x, y (i32 each, 1e-7 degree)
///
/// A cell entry is 0 for sea, `1 << 30 | country` for a country, `2 << 30 | n` for block n. A mixed
/// subcell's record is contiguous and its runs walk consecutive vertices, so a lookup touches few cache lines.
struct IndexLayout {
    struct Candidate {
        let country: UInt16
        let insideAtReference: Bool
        /// Runs of consecutive edges of one ring: the first edge's first vertex, and how many edges.
        let runs: [(start: UInt32, count: UInt32)]

        /// `edges` are the first vertices of the country's edges touching the subcell, ascending.
        init(country: UInt16, insideAtReference: Bool, edges: [UInt32]) {
            self.country = country
            self.insideAtReference = insideAtReference
            var runs: [(start: UInt32, count: UInt32)] = []
            for edge in edges {
                if let last = runs.last, last.start + last.count == edge {
                    runs[runs.count - 1].count += 1
                } else {
                    runs.append((edge, 1))
                }
            }
            self.runs = runs
        }

        /// The record words: the header, then (first vertex, edge count) for each run.
        var recordWords: [UInt32] {
            let header = CandidateHeader(country: country, insideAtReference: insideAtReference, runCount: runs.count)
            return [header.word] + runs.flatMap { [$0.start, $0.count] }
        }
    }

    /// The first word of a candidate in a subcell record: country | insideAtReference << 16 | runs << 17.
    ///
    /// The candidate takes ``wordCount`` words: this one, then (first vertex, edge count) for each run.
    struct CandidateHeader {
        let word: UInt32

        init(word: UInt32) { self.word = word }

        init(country: UInt16, insideAtReference: Bool, runCount: Int) {
            word = UInt32(country) | (insideAtReference ? 1 << 16 : 0) | UInt32(runCount) << 17
        }

        var country: Int { Int(word & 0xFFFF) }
        var insideAtReference: Bool { word & 0x1_0000 != 0 }
        var runCount: Int { Int(word >> 17) }
        var wordCount: Int { 1 + 2 * runCount }
    }

    static let magic = "GWCI"
    static let version: UInt32 = 3
    static let kind = "country index"
    /// Runs per candidate fit in the header's top 15 bits.
    static let maximumRuns = 0x7FFF

    var countries: [(code: String, name: String)]
    var vertices: [Vertex]
    var cells: [UInt32] = []
    var blockBases: [UInt32] = []
    var subcells: [UInt16] = []
    var mixedSubcells: [[Candidate]] = []

    init(countries: [(code: String, name: String)], vertices: [Vertex]) {
        self.countries = countries
        self.vertices = vertices
    }

    static func entry(country: UInt16?) -> UInt32 { country.map { 1 << 30 | UInt32($0) } ?? 0 }
    static func entry(reference: Int) -> UInt32 { 2 << 30 | UInt32(reference) }
    static func subcellEntry(country: UInt16?) -> UInt16 { country.map { $0 + 1 } ?? 0 }
    static func subcellEntry(mixed local: Int) -> UInt16 { 0x8000 | UInt16(local) }

    func encoded() -> [UInt8] {
        var writer = IndexFileWriter()
        writer.header(magic: Self.magic, version: Self.version)
        let records = mixedSubcells.map { $0.flatMap(\.recordWords) }
        for count in [
            UInt32(countries.count), UInt32(subcells.count / 256), UInt32(mixedSubcells.count),
            UInt32(records.reduce(0) { $0 + $1.count }), UInt32(vertices.count),
        ] {
            writer.u32(count)
        }
        for country in countries {
            writer.u8(UInt8(country.code.utf8.count))
            writer.raw(country.code.utf8)
            writer.u16(UInt16(country.name.utf8.count))
            writer.raw(country.name.utf8)
        }
        writer.array(cells)
        writer.array(blockBases)
        writer.array(subcells)
        var start: UInt32 = 0
        writer.u32(0)
        for record in records {
            start += UInt32(record.count)
            writer.u32(start)
        }
        for record in records {
            for word in record { writer.u32(word) }
        }
        for vertex in vertices {
            writer.u32(UInt32(bitPattern: vertex.x))
            writer.u32(UInt32(bitPattern: vertex.y))
        }
        return writer.bytes
    }
}
