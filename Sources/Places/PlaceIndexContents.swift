import Countries
import GeoCore
import IndexFile

/// What a places index file holds, read and checked.
struct PlaceIndexContents {
    var sources = ""
    var timeZones: CountryIndex
    var regionPolygons: CountryIndex
    var regions: [PlaceIndex.Region]
    var countryCodes: [String]
    var places: PlaceTable
    var tree: LocalityTree

    init(reading reader: inout IndexFileReader) throws(IndexFileError) {
        try reader.header(magic: PlaceIndexFormat.magic, version: PlaceIndexFormat.version, kind: PlaceIndexFormat.kind)
        sources = try reader.string(length: Int(try reader.u32()))
        var zones = try reader.section()
        var regionSection = try reader.section()
        // The polygons and the places are independent: read at once.
        ((timeZones, regionPolygons), (regions, countryCodes, places, tree)) = try ParallelLoad.run(
            { () throws(IndexFileError) in
                (
                    try CountryIndex(reading: &zones, coastalTolerance: 0),
                    try CountryIndex(reading: &regionSection, coastalTolerance: CountryIndex.territorialSea)
                )
            },
            { () throws(IndexFileError) in try Self.readPlaces(&reader) }
        )
    }

    /// Reads what follows the polygons: the regions, the countries' ranges, the places' table and their trees.
    private static func readPlaces(
        _ reader: inout IndexFileReader
    ) throws(IndexFileError) -> (
        regions: [PlaceIndex.Region], countryCodes: [String], places: PlaceTable, tree: LocalityTree
    ) {
        var regions: [PlaceIndex.Region] = []
        for _ in 0..<Int(try reader.u32()) {
            let code = try reader.string(length: Int(try reader.u8()))
            let name = try reader.string(length: Int(try reader.u16()))
            let localName = try reader.string(length: Int(try reader.u16()))
            regions.append(PlaceIndex.Region(code: code, name: name, localName: localName))
        }
        var countryCodes: [String] = []
        var countryRanges: [Range<Int>] = []
        for _ in 0..<Int(try reader.u32()) {
            countryCodes.append(try reader.string(length: Int(try reader.u8())))
            let start = Int(try reader.u32())
            countryRanges.append(start..<(start + Int(try reader.u32())))
        }
        let count = Int(try reader.u32())
        let placesStart = reader.offset
        var places = PlaceTable()
        places.geonameIds = try reader.array(count)
        places.latitudes = try reader.array(count)
        places.longitudes = try reader.array(count)
        places.populations = try reader.array(count)
        let regionNumbers: [UInt16] = try reader.array(count)
        let axes: [UInt8] = try reader.array(count)
        places.nameEnds = try reader.array(count)
        places.towns = try reader.array(count)
        places.neighbours = try reader.array(count)
        let anywhereOrder: [UInt32] = try reader.array(count)
        let anywhereAxes: [UInt8] = try reader.array(count)
        places.names = try reader.array(Int(try reader.u32()))
        try reader.expectEnd()
        let regionCount = regions.count
        let table = places
        let units = Int(PlaceIndexFormat.degreeUnits)
        guard countryRanges.allSatisfy({ $0.upperBound <= count }),
            regionNumbers.allSatisfy({ $0 == LocalityTree.noRegion || Int($0) < regionCount }),
            axes.allSatisfy({ $0 < 3 }),
            table.latitudes.allSatisfy({ abs(Int($0)) <= 90 * units }),
            table.longitudes.allSatisfy({ abs(Int($0)) <= 180 * units }),
            zip(table.nameEnds, [0] + table.nameEnds).allSatisfy({ $0 >= $1 }),
            table.nameEnds.last.map({ Int($0) == table.names.count }) ?? true,
            // A quarter's town is a town: one step from any place to the town a person names.
            table.towns.allSatisfy({ Int($0) < count && table.towns[Int($0)] == $0 }),
            table.neighbours.allSatisfy({ $0 == PlaceTable.noPlace || Int($0) < count }),
            anywhereAxes.allSatisfy({ $0 < 3 }),
            Self.isPermutation(anywhereOrder)
        else {
            throw reader.failure(
                "the places' table is inconsistent (a range, region, axis, coordinate, name end, town, neighbour or order)",
                at: placesStart
            )
        }
        let nodes = (0..<count).map { place in
            let point = LocalityTree.unitVector(table.coordinate(of: place))
            return LocalityTree.Node(x: point.x, y: point.y, z: point.z, place: UInt32(place))
        }
        let tree = LocalityTree(
            nodes: nodes,
            axes: axes,
            regions: regionNumbers,
            countryRanges: countryRanges,
            anywhereOrder: anywhereOrder
        )
        return (regions, countryCodes, places, tree)
    }

    /// Whether `numbers` holds each of 0..<count once.
    private static func isPermutation(_ numbers: [UInt32]) -> Bool {
        var seen = [Bool](repeating: false, count: numbers.count)
        for number in numbers {
            guard Int(number) < numbers.count, !seen[Int(number)] else { return false }
            seen[Int(number)] = true
        }
        return true
    }
}
