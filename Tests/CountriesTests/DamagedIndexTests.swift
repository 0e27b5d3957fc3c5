import Countries
import GeoCore
import IndexFile
import Testing

/// A damaged or foreign index file is refused with an error that names the file and the byte where the damage was
/// found, never a trap or a wrong answer.
@Suite("A damaged country index", .timeLimit(.minutes(5)))
struct DamagedIndexTests {
    /// Two square countries side by side: enough for every table of the format.
    static let bytes: [UInt8] = {
        func square(_ west: Double) -> [[(longitude: Double, latitude: Double)]] {
            [[(west, 0), (west + 2, 0), (west + 2, 2), (west, 2), (west, 0)]]
        }
        let boundaries = [
            CountryBoundary(code: "AA", name: "West", rings: square(10)),
            CountryBoundary(code: "BB", name: "East", rings: square(12)),
        ]
        do { return try CountryIndexBuilder.build(boundaries) } catch { fatalError("\(error)") }
    }()

    func failure(_ bytes: [UInt8]) -> IndexFileError? {
        do {
            _ = try CountryIndex(bytes: bytes, file: "test.idx")
            return nil
        } catch {
            return error
        }
    }

    @Test("the undamaged bytes read, and answer")
    func undamaged() throws {
        let index = try CountryIndex(bytes: Self.bytes, file: "test.idx")
        #expect(index.country(at: .init(latitude: 1, longitude: 11)!)?.code == "AA")
        #expect(index.country(at: .init(latitude: 1, longitude: 13)!)?.code == "BB")
    }

    @Test("another file's magic, a newer version, a cut and trailing bytes: each named with its byte")
    func framing() throws {
        var foreign = Self.bytes
        foreign[0] = UInt8(ascii: "X")
        let notIndex = try #require(failure(foreign))
        #expect(notIndex.file == "test.idx" && notIndex.offset == 0)
        #expect(notIndex.description.contains("not a geoworker country index"), "\(notIndex)")

        var newer = Self.bytes
        newer[4] = 99
        let version = try #require(failure(newer))
        #expect(
            version.description
                == "test.idx, at byte 8: country index format version 99, this geoworker reads version 3: rebuild it"
        )

        let cut = try #require(failure(Array(Self.bytes.dropLast(5))))
        #expect(cut.description.contains("truncated"), "\(cut)")
        #expect(cut.offset.map { $0 > 28 && $0 < Self.bytes.count } == true, "\(cut)")

        let trailing = try #require(failure(Self.bytes + [0]))
        #expect(trailing.offset == Self.bytes.count)
        #expect(trailing.description.hasSuffix("1 bytes follow the end"), "\(trailing)")
    }

    @Test("a cell naming a country the file does not have is found at that cell's byte")
    func badReference() throws {
        // The header (4 + 6 x 4), the two countries' codes and names, then the cells, four bytes each.
        let cells = 28 + (1 + 2 + 2 + 4) + (1 + 2 + 2 + 4)
        let cell = 179 * 360 + 10  // a cell far from both countries
        var damaged = Self.bytes
        let entry = UInt32(1 << 30 | 7)
        for byte in 0..<4 { damaged[cells + 4 * cell + byte] = UInt8(truncatingIfNeeded: entry >> (8 * byte)) }
        let error = try #require(failure(damaged))
        #expect(error.offset == cells + 4 * cell)
        #expect(error.description.contains("a cell names country 7 of 2"), "\(error)")
    }
}
