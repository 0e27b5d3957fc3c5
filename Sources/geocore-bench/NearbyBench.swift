import Foundation
import GeoCore
import TestSupport

/// The nearby grid over a million devices spread like the map benchmark's (latitudes -60 to 70, every longitude):
/// how fast they are placed and moved, a nearby query of 5 km (the target: under 1 ms), and a city's box.
func benchmarkNearby(random: inout SplitMix64) {
    let count = 1_000_000
    var grid = NearbyGrid()
    var points: [Coordinate] = []
    points.reserveCapacity(count)
    for _ in 0..<count {
        points.append(
            Coordinate(
                latitude: Double.random(in: -60...70, using: &random),
                longitude: Double.random(in: -180..<180, using: &random)
            )!
        )
    }
    report(
        "nearby grid: placing 1M devices",
        count: count,
        seconds: seconds {
            for (id, point) in points.enumerated() { grid.place(id, at: point) }
        },
        unit: "devices"
    )
    report(
        "nearby grid: moving 1M devices about 100 m",
        count: count,
        seconds: seconds {
            for (id, point) in points.enumerated() {
                grid.place(id, at: Coordinate(latitude: point.latitude + 0.0009, longitude: point.longitude)!)
            }
        },
        unit: "moves"
    )
    let queries = 10_000
    var found = 0
    let nearby = seconds {
        for query in 0..<queries {
            let center = points[query * 97 % count]
            found += grid.nearest(to: center, within: 5_000, limit: 10).count
        }
    }
    print(
        String(
            format: "nearby grid: 5 km nearest-10 query at 1M devices: %.1f us each (%.2f found on average)",
            nearby / Double(queries) * 1e6,
            Double(found) / Double(queries)
        )
    )
    var inBox = 0
    let box = seconds {
        for query in 0..<1_000 {
            let center = points[query * 131 % count]
            inBox +=
                grid.inside(
                    south: center.latitude - 0.1,
                    west: center.longitude - 0.15,
                    north: center.latitude + 0.1,
                    east: center.longitude + 0.15
                ).count
        }
    }
    print(
        String(
            format: "nearby grid: a city's box (0.2 x 0.3 degrees) at 1M devices: %.1f us each (%.1f devices)",
            box / 1_000 * 1e6,
            Double(inBox) / 1_000
        )
    )
}
