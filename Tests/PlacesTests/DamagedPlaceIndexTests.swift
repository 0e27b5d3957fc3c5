import Countries
import IndexFile
import Places
import Testing

/// A damaged places index is refused naming the file and the byte, counted from the file's start even inside the
/// polygons it nests.
@Suite("A damaged places index", .timeLimit(.minutes(5)))
struct DamagedPlaceIndexTests {
    static let bytes: [UInt8] = {
        let square: [[(longitude: Double, latitude: Double)]] = [[(10, 0), (12, 0), (12, 2), (10, 2), (10, 0)]]
        let sources = PlaceIndexBuilder.Sources(
            places: "1\tTown\t1.0\t11.0\tAA\tAA-01\t5000\tEtc/UTC\n",
            regions: "AA-01\tRegion\t01\n",
            timeZones: [CountryBoundary(code: "Etc/UTC", name: "Etc/UTC", rings: square)],
            regionBoundaries: [CountryBoundary(code: "AA-01", name: "Region", rings: square)],
            description: "a test"
        )
        do { return try PlaceIndexBuilder.build(sources) } catch { fatalError("\(error)") }
    }()

    @Test("a wrong version inside the nested time-zone polygons names the file's own byte")
    func nestedVersion() throws {
        _ = try PlaceIndex(bytes: Self.bytes)
        // "GWPL", version, the sources' length and text, the section's length: then the polygons' "GWCI".
        let nested = 4 + 4 + 4 + "a test".utf8.count + 4
        #expect(Array(Self.bytes[nested..<nested + 4]) == Array("GWCI".utf8))
        var damaged = Self.bytes
        damaged[nested + 4] = 42
        let error = try #require(throws: IndexFileError.self) { try PlaceIndex(bytes: damaged) }
        #expect(error.offset == nested + 8)
        #expect(error.description.contains("country index format version 42"), "\(error)")
    }

    @Test("a missing file is named with the reason")
    func missing() throws {
        let error = try #require(throws: IndexFileError.self) { try PlaceIndex(contentsOf: "/nonexistent/places.idx") }
        #expect(error.offset == nil)
        #expect(
            error.description == "the places index /nonexistent/places.idx: cannot be read: No such file or directory"
        )
    }
}
