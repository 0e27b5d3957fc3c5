import Countries
import GeoCore

/// The places index's file format.
///
/// `places.idx`, little-endian:
///
/// ```
/// "GWPL", u32 version
/// u32 length, UTF-8: what it was built from
/// u32 length, bytes: the time-zone polygons as a country index (codes: IANA names)
/// u32 length, bytes: the region polygons as a country index (codes: ISO 3166-2)
/// u32 count, then per region: u8 length + code, u16 length + name
/// u32 count, then per country: u8 length + code, u32 first place, u32 place count
/// u32 count N, then the places in k-d tree order, column by column: u32[N] GeoNames ids, i32[N] latitudes and
///   i32[N] longitudes (1e-7 degree), u32[N] populations, u16[N] regions (0xFFFF none), u8[N] splitting axes,
///   u32[N] ends of their names in the name bytes
/// u32 length, bytes: the places' names, UTF-8, one after the other
/// ```
enum PlaceIndexFormat {
    static let magic: [UInt8] = Array("GWPL".utf8)
    static let version: UInt32 = 2
    static let degreeUnits = 10_000_000.0
}

/// A places index that cannot be built or read.
public struct PlaceIndexError: Error, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// The populated places, column by column, in the k-d tree's order (a node's number is its place's).
struct PlaceTable: Sendable {
    var geonameIds: [UInt32] = []
    var latitudes: [Int32] = []
    var longitudes: [Int32] = []
    var populations: [UInt32] = []
    var nameEnds: [UInt32] = []
    var names: [UInt8] = []

    var count: Int { geonameIds.count }

    /// The place's coordinate: in range, as the reader checked every one.
    func coordinate(of place: Int) -> Coordinate {
        Coordinate(
            latitude: Double(latitudes[place]) / PlaceIndexFormat.degreeUnits,
            longitude: Double(longitudes[place]) / PlaceIndexFormat.degreeUnits
        )!
    }

    func name(of place: Int) -> String {
        let start = place == 0 ? 0 : Int(nameEnds[place - 1])
        return String(decoding: names[start..<Int(nameEnds[place])], as: UTF8.self)
    }

    var memoryFootprint: Int { count * 20 + names.count }
}

/// What a places index file holds, read and checked.
struct PlaceIndexContents {
    var sources = ""
    var timeZones: CountryIndex
    var regionPolygons: CountryIndex
    var regions: [PlaceIndex.Region] = []
    var countryCodes: [String] = []
    var places = PlaceTable()
    var tree: LocalityTree

    init(reading bytes: UnsafeRawBufferPointer) throws(PlaceIndexError) {
        var reader = PlaceIndexReader(bytes: bytes)
        guard Array(try reader.take(4)) == PlaceIndexFormat.magic else {
            throw PlaceIndexError("not a geoworker places index")
        }
        let version = try reader.u32()
        guard version == PlaceIndexFormat.version else {
            throw PlaceIndexError("places index version \(version), expected \(PlaceIndexFormat.version)")
        }
        sources = try reader.string(length: Int(try reader.u32()))
        let zoneBytes = try reader.take(Int(try reader.u32()))
        let regionBytes = try reader.take(Int(try reader.u32()))
        timeZones = try Self.polygons(zoneBytes, coastalTolerance: 0, of: "time-zone")
        regionPolygons = try Self.polygons(regionBytes, coastalTolerance: CountryIndex.territorialSea, of: "region")
        for _ in 0..<Int(try reader.u32()) {
            let code = try reader.string(length: Int(try reader.u8()))
            regions.append(PlaceIndex.Region(code: code, name: try reader.string(length: Int(try reader.u16()))))
        }
        var countryRanges: [Range<Int>] = []
        for _ in 0..<Int(try reader.u32()) {
            countryCodes.append(try reader.string(length: Int(try reader.u8())))
            let start = Int(try reader.u32())
            countryRanges.append(start..<(start + Int(try reader.u32())))
        }
        let count = Int(try reader.u32())
        places.geonameIds = try reader.array(count)
        places.latitudes = try reader.array(count)
        places.longitudes = try reader.array(count)
        places.populations = try reader.array(count)
        let regionNumbers: [UInt16] = try reader.array(count)
        let axes: [UInt8] = try reader.array(count)
        places.nameEnds = try reader.array(count)
        places.names = try reader.array(Int(try reader.u32()))
        guard reader.offset == bytes.count else { throw PlaceIndexError("the places index has trailing bytes") }
        let regionCount = regions.count
        let table = places
        let units = Int(PlaceIndexFormat.degreeUnits)
        guard countryRanges.allSatisfy({ $0.upperBound <= count }),
            regionNumbers.allSatisfy({ $0 == LocalityTree.noRegion || Int($0) < regionCount }),
            axes.allSatisfy({ $0 < 3 }),
            table.latitudes.allSatisfy({ abs(Int($0)) <= 90 * units }),
            table.longitudes.allSatisfy({ abs(Int($0)) <= 180 * units }),
            zip(table.nameEnds, [0] + table.nameEnds).allSatisfy({ $0 >= $1 }),
            table.nameEnds.last.map({ Int($0) == table.names.count }) ?? true
        else { throw PlaceIndexError("the places index is inconsistent") }
        let nodes = (0..<count).map { place in
            let point = LocalityTree.unitVector(table.coordinate(of: place))
            return LocalityTree.Node(x: point.x, y: point.y, z: point.z, place: UInt32(place))
        }
        tree = LocalityTree(nodes: nodes, axes: axes, regions: regionNumbers, countryRanges: countryRanges)
    }
}

extension PlaceIndexContents {
    /// Polygons stored as a country index.
    static func polygons(
        _ bytes: UnsafeRawBufferPointer,
        coastalTolerance: Double,
        of kind: String
    ) throws(PlaceIndexError) -> CountryIndex {
        do {
            return try CountryIndex(reading: bytes, coastalTolerance: coastalTolerance)
        } catch {
            throw PlaceIndexError("the places index's \(kind) polygons: \(error.description)")
        }
    }
}

/// Reads the file's fields from bytes it does not own (a mapped file's): the caller keeps them alive meanwhile.
struct PlaceIndexReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    mutating func take(_ count: Int) throws(PlaceIndexError) -> UnsafeRawBufferPointer {
        guard count >= 0, bytes.count - offset >= count else { throw PlaceIndexError("the places index is truncated") }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    mutating func u8() throws(PlaceIndexError) -> UInt8 { try take(1)[0] }
    mutating func u16() throws(PlaceIndexError) -> UInt16 { try array(1)[0] }
    mutating func u32() throws(PlaceIndexError) -> UInt32 { try array(1)[0] }

    mutating func string(length: Int) throws(PlaceIndexError) -> String {
        String(decoding: try take(length), as: UTF8.self)
    }

    /// `count` little-endian integers.
    mutating func array<Integer: FixedWidthInteger>(_ count: Int) throws(PlaceIndexError) -> [Integer] {
        let raw = try take(count * MemoryLayout<Integer>.size)
        return [Integer](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw)
            for index in 0..<count where Integer(littleEndian: 1) != 1 {
                buffer[index] = Integer(littleEndian: buffer[index])
            }
            initialized = count
        }
    }
}

/// Writes the file's fields.
struct PlaceIndexWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }

    mutating func array<Integer: FixedWidthInteger>(_ values: [Integer]) {
        for value in values { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
    }

    /// A string with its length first, as a `Length` (u8, u16 or u32).
    mutating func string<Length: FixedWidthInteger>(_ text: String, lengthAs: Length.Type) throws(PlaceIndexError) {
        guard let length = Length(exactly: text.utf8.count) else { throw PlaceIndexError("\"\(text)\" is too long") }
        array([length])
        bytes += text.utf8
    }

    mutating func section(_ section: [UInt8]) {
        u32(UInt32(section.count))
        bytes += section
    }
}
