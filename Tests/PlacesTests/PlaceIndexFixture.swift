import Countries
import Foundation
import GeoCore
import Places

/// The places index `make places` builds (`make test` builds it first), and the bundled country index.
let placeIndex: PlaceIndex = {
    let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../.build-places/places.idx").standardizedFileURL.path
    do {
        return try PlaceIndex(contentsOf: path)
    } catch {
        fatalError("\(error): run `make places` first (`make test` does)")
    }
}()

let countryIndex: CountryIndex = {
    do { return try CountryIndex.bundled() } catch { fatalError("\(error)") }
}()

/// The places of a point as geoworker looks them up: its country from the country index, then the places index.
func lookUp(_ latitude: Double, _ longitude: Double, accuracy: Double = 0) -> PlaceAnswer {
    let coordinate = Coordinate(latitude: latitude, longitude: longitude)!
    return placeIndex.places(
        at: coordinate,
        within: accuracy,
        countryCode: countryIndex.country(at: coordinate)?.code
    )
}
