import Foundation
import GeoCore
import TestSupport

/// The fleet geofence catalog at issue 64's scale: 1,000,000 geofences, half circles of 50 to 500 m and half polygons of
/// 10 to 200 vertices, in 50,000 areas of 20 geofences within a kilometre of the area's centre (latitudes -60 to 70,
/// every longitude): how fast the catalog is filled, its resident bytes, and the lookup a fix makes (the geofences
/// whose box meets 100 m around it), which every position of a subscribed device pays.
func benchmarkCatalog(random: inout SplitMix64) {
    let (areas, perArea) = (50_000, 20)
    let centers = (0..<areas).map { _ in
        Coordinate(
            latitude: Double.random(in: -60...70, using: &random),
            longitude: Double.random(in: -179..<179, using: &random)
        )!
    }
    func near(_ center: Coordinate, within metres: Double, using random: inout SplitMix64) -> Coordinate {
        let plane = LocalPlane(at: center)
        let (east, north) = (Double.random(in: -1...1, using: &random), Double.random(in: -1...1, using: &random))
        return Coordinate(
            latitude: center.latitude + north * metres / LocalPlane.metresPerDegree,
            longitude: center.longitude + east * metres / plane.metresPerDegreeEast
        )!
    }
    // Made and put one at a time, so that what is resident after is the catalog's alone: its shapes with it.
    let before = heapBytes()
    var catalog = GeofenceCatalog()
    var making = 0.0
    let fill = seconds {
        for (area, center) in centers.enumerated() {
            for index in 0..<perArea {
                var geofence: CatalogGeofence?
                making += seconds {
                    let at = near(center, within: 1_000, using: &random)
                    let radius = Double.random(in: 50...500, using: &random)
                    let shape: PinShape =
                        index % 2 == 0
                        ? .circle(center: at, radius: radius)
                        : polygon(around: at, radius: radius, vertices: Int.random(in: 10...200, using: &random))
                    geofence = CatalogGeofence(
                        geofence: Pin(id: "g-\(area)-\(index)", shape: shape)!,
                        tags: ["fleet-\(area % 8)"]
                    )
                }
                catalog.put(geofence!, at: 0)
            }
        }
    }
    let after = heapBytes()
    print(
        String(
            format: "catalog: %d geofences put in %.2f s (their shapes made besides); %.0f MB resident (%.0f bytes a"
                + " geofence, its shape included)",
            catalog.count,
            fill - making,
            Double(after - before) / 1e6,
            Double(after - before) / Double(catalog.count)
        )
    )
    let fixes = (0..<1_000_000).map { index in near(centers[index % areas], within: 1_000, using: &random) }
    var found = 0
    let lookup = seconds {
        for fix in fixes {
            let (north, east) = (100 / LocalPlane.metresPerDegree, 100 / LocalPlane(at: fix).metresPerDegreeEast)
            catalog.forEach(
                meeting: (
                    west: fix.longitude - east, south: fix.latitude - north, east: fix.longitude + east,
                    north: fix.latitude + north
                ),
                at: 1
            ) { _, _ in found += 1 }
        }
    }
    print(
        String(
            format: "catalog: a fix's lookup (100 m around it): %.0f ns each, %.2f geofences found on average",
            lookup / Double(fixes.count) * 1e9,
            Double(found) / Double(fixes.count)
        )
    )
}
