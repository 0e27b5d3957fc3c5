import Countries
import Foundation
import GeoCore
import Testing

/// Answers from an independent implementation (shapely/GEOS on the same boundaries), generated at build
/// time by tools/countries/generate_reference_points.py: 100,000 points uniform on the sphere and 50,000
/// within about 1 km of a boundary.
struct ReferencePoints {
    struct Point {
        let x: Int32
        let y: Int32
        let code: String?
    }

    let points: [Point]

    init() throws {
        let url = try #require(
            Bundle.module.url(forResource: "reference-points", withExtension: "bin", subdirectory: "Fixtures")
        )
        let bytes = [UInt8](try Data(contentsOf: url))
        try #require(Array(bytes[0..<4]) == Array("GWRP".utf8))
        func u32(_ offset: Int) -> Int { bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) } }
        let count = u32(4)
        let countryCount = u32(8)
        let codes = (0..<countryCount).map { String(decoding: bytes[12 + 2 * $0..<14 + 2 * $0], as: UTF8.self) }
        var offset = 12 + 2 * countryCount
        var points: [Point] = []
        points.reserveCapacity(count)
        for _ in 0..<count {
            let x = Int32(truncatingIfNeeded: u32(offset))
            let y = Int32(truncatingIfNeeded: u32(offset + 4))
            let country = bytes[offset + 8]
            points.append(Point(x: x, y: y, code: country == 255 ? nil : codes[Int(country)]))
            offset += 9
        }
        self.points = points
    }
}

@Suite("Country lookup against an exact reference", .timeLimit(.minutes(5)))
struct ReferenceAgreementTests {
    @Test("150,000 points agree with shapely on the same boundaries (no coastal tolerance)")
    func agreement() throws {
        let reference = try ReferencePoints()
        #expect(reference.points.count == 150_000)
        let index = bundledIndex.withCoastalTolerance(0)
        var disagreements: [String] = []
        for point in reference.points {
            let coordinate = Coordinate(latitude: Double(point.y) / 1e7, longitude: Double(point.x) / 1e7)!
            let answer = index.country(at: coordinate)?.code
            if answer != point.code {
                disagreements.append(
                    "(\(coordinate.latitude), \(coordinate.longitude)): \(answer ?? "none") vs \(point.code ?? "none")"
                )
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(5))")
        #expect(reference.points.filter { $0.code != nil }.count > 50_000, "the reference must cover land well")
    }
}
