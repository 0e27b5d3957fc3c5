// Country lookup benchmark.
//
//   swift run -c release country-bench
//
// Sets of about 1M points: uniform on the sphere (also with the coastal tolerance off); the uniform points
// at sea that the coastal search places in a country (repeated to 1M); uniform on land (points of the first
// kind that fall in a country); within 1 km of a border (a point of a land set moved up to 1 km, kept when
// its 1-km neighbourhood holds another country). For each: the mean from timing all lookups together, and
// the p99 from timing each lookup alone (minus the clock's own cost, measured the same way). Default
// coastal tolerance (12 nmi) unless said otherwise.
import Countries
import Foundation
import GeoCore
import TestSupport

func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

let loadStart = nanoseconds()
let index = try CountryIndex.bundled()
let exact = index.withCoastalTolerance(0)
print(
    String(
        format: "country-bench: index loaded in %.0f ms, %.1f MB in memory (%d countries)",
        Double(nanoseconds() - loadStart) / 1e6,
        Double(index.memoryFootprint) / 1e6,
        index.countries.count
    )
)

var random = SplitMix64(seed: 7)
func uniformPoint(_ random: inout SplitMix64) -> Coordinate {
    let longitude = Double.random(in: -180..<180, using: &random)
    let latitude = asin(Double.random(in: -1...1, using: &random)) * 180 / .pi
    return Coordinate(latitude: latitude, longitude: longitude)!
}

func measure(
    _ label: String,
    _ points: [Coordinate],
    index: CountryIndex = index,
    lookup: ((Coordinate) -> CountryIndex.Country?)? = nil
) {
    let lookup = lookup ?? { index.country(at: $0) }
    var found = 0
    // Warm up, then the mean over all lookups.
    for point in points.prefix(10_000) where lookup(point) != nil { found += 1 }
    let start = nanoseconds()
    for point in points where lookup(point) != nil { found += 1 }
    let mean = Double(nanoseconds() - start) / Double(points.count)
    // Each lookup alone, for the tail; the clock's own cost is measured the same way and subtracted.
    var clock: [UInt64] = []
    for _ in 0..<100_000 {
        let a = nanoseconds()
        clock.append(nanoseconds() - a)
    }
    clock.sort()
    let overhead = clock[clock.count / 2]
    var single: [UInt64] = []
    single.reserveCapacity(points.count)
    for point in points {
        let a = nanoseconds()
        if lookup(point) != nil { found += 1 }
        single.append(nanoseconds() - a)
    }
    single.sort()
    func percentile(_ p: Double) -> Double {
        Double(single[min(single.count - 1, Int(Double(single.count) * p))]) - Double(overhead)
    }
    print(
        String(
            format:
                "%@: mean %.0f ns, p50 %.0f ns, p99 %.0f ns, p99.9 %.0f ns (%d lookups; clock cost %d ns subtracted)",
            label,
            mean,
            percentile(0.5),
            percentile(0.99),
            percentile(0.999),
            points.count,
            overhead
        )
    )
    precondition(found > 0)
}

let count = 1_000_000
let uniform = (0..<count).map { _ in uniformPoint(&random) }
var land: [Coordinate] = []
while land.count < count {
    let point = uniformPoint(&random)
    if exact.country(at: point) != nil { land.append(point) }
}
var nearBorders: [Coordinate] = []
let metresPerDegree = 111_195.0
var attempt = 0
while nearBorders.count < count {
    // Land points in turn, each tried once: most are far from any border and give nothing.
    let home = land[attempt % land.count]
    attempt += 1
    let here = exact.country(at: home)
    // Probe a ring 1 km around: keep points with another country (or sea) within 1 km.
    let bearing = Double.random(in: 0..<(2 * .pi), using: &random)
    let north = cos(bearing) * 1000 / metresPerDegree
    let east = sin(bearing) * 1000 / (metresPerDegree * max(cos(home.latitude * .pi / 180), 0.01))
    guard
        let probe = Coordinate(
            latitude: min(90, max(-90, home.latitude + north)),
            longitude: min(180, max(-180, home.longitude + east))
        )
    else { continue }
    if exact.country(at: probe) != here { nearBorders.append(probe) }
}

measure("uniform on the globe", uniform)
measure("uniform, coastal tolerance off", uniform, index: exact)
// The uniform points that only the coastal search places (about 3 %: they make the uniform set's tail).
let coastal = uniform.filter { exact.country(at: $0) == nil && index.country(at: $0) != nil }
measure(
    "at sea within 12 nmi of land",
    Array(repeating: coastal, count: count / coastal.count + 1).joined().shuffled(using: &random)
)
measure("on land", land)
measure("within 1 km of a border or coast", nearBorders)
// The accuracy disc a device's country is decided by (a fix and its accuracy radius), beside the point lookup.
for radius in [20.0, 100.0] {
    measure("accuracy disc \(Int(radius)) m, on land", land) { index.country(at: $0, within: radius) }
    measure("accuracy disc \(Int(radius)) m, within 1 km of a border or coast", nearBorders) {
        index.country(at: $0, within: radius)
    }
}

// The language suggestion made at each device's first fix and at each country change: countries as land points
// give them, with the device languages the service benchmark's devices report.
let languages = try CountryLanguages.bundled()
let codes = land.prefix(100_000).compactMap { exact.country(at: $0)?.code }
let deviceLanguages = ["en-GB", "fr-FR"]
var suggested = 0
let suggestionStart = nanoseconds()
for round in 0..<10 {
    for code in codes
    where languages.suggestion(for: code, deviceLanguages: round % 2 == 0 ? deviceLanguages : [])
        != nil
    {
        suggested += 1
    }
}
print(
    String(
        format: "language suggestion: %.0f ns (%d countries of land points, with and without device languages)",
        Double(nanoseconds() - suggestionStart) / Double(10 * codes.count),
        Set(codes).count
    )
)
precondition(suggested > 0)
