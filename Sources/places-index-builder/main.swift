import Countries
import Foundation
import Places

// Compiles the places' sources (`make places` prepares them with tools/places/prepare_places.py) into places.idx.
//
//     places-index-builder SOURCE_DIR OUTPUT_FILE
//
// SOURCE_DIR holds places.tsv, regions.tsv, timezones.geojson, region-boundaries.geojson and sources.txt.

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: places-index-builder SOURCE_DIR OUTPUT_FILE\n".utf8))
    exit(64)
}
let directory = URL(fileURLWithPath: arguments[1])

func read(_ name: String) -> Data {
    do {
        return try Data(contentsOf: directory.appendingPathComponent(name))
    } catch {
        let message = "places-index-builder: cannot read \(name) in \(arguments[1]): \(error)\n"
        FileHandle.standardError.write(Data(message.utf8))
        exit(66)
    }
}

do {
    let started = Date()
    let sources = PlaceIndexBuilder.Sources(
        places: String(decoding: read("places.tsv"), as: UTF8.self),
        regions: String(decoding: read("regions.tsv"), as: UTF8.self),
        timeZones: try CountryBoundary.decodeGeoJSON(read("timezones.geojson"), codeProperty: "tzid"),
        regionBoundaries: try CountryBoundary.decodeGeoJSON(read("region-boundaries.geojson")),
        description: String(decoding: read("sources.txt"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
    )
    let bytes = try PlaceIndexBuilder.build(sources)
    try Data(bytes).write(to: URL(fileURLWithPath: arguments[2]))
    let index = try PlaceIndex(bytes: bytes)
    print(
        "places-index-builder: \(arguments[2]): \(bytes.count) bytes, \(index.placeCount) places, "
            + "\(index.regions.count) regions, \(index.timeZoneIdentifiers.count) time zones, "
            + String(format: "%.1f s", Date().timeIntervalSince(started))
    )
} catch {
    FileHandle.standardError.write(Data("places-index-builder: \(error)\n".utf8))
    exit(1)
}
