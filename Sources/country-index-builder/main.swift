// Compiles country boundaries (GeoJSON) into geoworker's binary country index.
//
//   swift run -c release country-index-builder BOUNDARIES.geojson OUTPUT.idx
//
// The GeoJSON is a FeatureCollection with one Feature per country: properties.code (ISO 3166-1 alpha-2),
// properties.name (English), Polygon or MultiPolygon geometry. tools/countries/prepare_boundaries.py makes
// it from Natural Earth; any boundaries of the same shape work. The same input gives the same bytes.
import Countries
import Foundation

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: country-index-builder BOUNDARIES.geojson OUTPUT.idx\n".utf8))
    exit(2)
}
do {
    let start = ContinuousClock.now
    let boundaries = try CountryBoundary.decodeGeoJSON(try Data(contentsOf: URL(fileURLWithPath: arguments[1])))
    let bytes = try CountryIndexBuilder.build(boundaries)
    try Data(bytes).write(to: URL(fileURLWithPath: arguments[2]))
    let index = try CountryIndex(bytes: bytes)
    print(
        "\(index.countries.count) countries, \(bytes.count) bytes -> \(arguments[2]) in \(ContinuousClock.now - start)"
    )
} catch {
    FileHandle.standardError.write(Data("country-index-builder: \(error)\n".utf8))
    exit(1)
}
