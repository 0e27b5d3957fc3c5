// The places index: its size and load, its agreement with independent answers, the cost of a lookup, the
// tracker's cost per position with places on and off, and `geocode --places` as a whole process.
//
//   make places && python3 tools/places/reference_points.py .build-places    (the reference answers)
//   swift run -c release places-bench [--only load|agreement|lookup|tracker|geocode]
//
// Agreement: time zones against tzfpy (the same polygons, another implementation) on random points of the whole
// sphere; region polygons against shapely on random points of the countries they cover whole; nearest-place
// regions on GeoNames places held out of an index built without them (each place's region as GeoNames gives it,
// against the region of its nearest other place of the same country).
import Countries
import Foundation
import GeoCore
import Places
import TestSupport

let only: String? =
    CommandLine.arguments.count == 3 && CommandLine.arguments[1] == "--only" ? CommandLine.arguments[2] : nil
func runs(_ phase: String) -> Bool { only == nil || only == phase }
let directory = URL(fileURLWithPath: ".build-places")

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func residentBytes() -> Int {
    let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

func lines(_ name: String) -> [[Substring]] {
    guard let text = try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8) else {
        print("places-bench: \(name) is missing: run `python3 tools/places/reference_points.py .build-places`")
        exit(1)
    }
    return text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false) }
}

let countries = try CountryIndex.bundled()
let before = residentBytes()
var index: PlaceIndex!
let loadTime = try seconds { index = try PlaceIndex(contentsOf: directory.appendingPathComponent("places.idx").path) }
let fileSize = (try? FileManager.default.attributesOfItem(atPath: ".build-places/places.idx")[.size] as? Int) ?? 0
if runs("load") {
    print(
        String(
            format: "places index: %.1f MB on disk, loaded in %.0f ms, tables %.1f MB, resident +%.1f MB",
            Double(fileSize) / 1e6,
            loadTime * 1000,
            Double(index.memoryFootprint) / 1e6,
            Double(residentBytes() - before) / 1e6
        )
    )
}

if runs("agreement") {
    var agree = 0
    var total = 0
    var disagreements: [String: Int] = [:]
    for fields in lines("reference-timezones.tsv") {
        let point = Coordinate(latitude: Double(fields[0])!, longitude: Double(fields[1])!)!
        let ours = index.timeZone(at: point) ?? ""
        total += 1
        if ours == fields[2] { agree += 1 } else { disagreements["\(fields[2]) -> \(ours)", default: 0] += 1 }
    }
    print(
        String(
            format: "time zones vs tzfpy: %d of %d random points agree (%.3f %%)",
            agree,
            total,
            100 * Double(agree) / Double(total)
        )
            + (disagreements.isEmpty
                ? ""
                : "; differ: "
                    + disagreements.sorted { $0.value > $1.value }.prefix(5).map { "\($0.key) \($0.value)" }.joined(
                        separator: ", "
                    ))
    )

    // The polygon lookup itself (the point's country given as the polygon's), and how often the country index
    // puts the point in that country at all (the polygons are coarser than the country boundaries: a point of a
    // state's polygon may lie at sea or across a border by the country index, and then gets no polygon region).
    agree = 0
    total = 0
    var byCountry: [String: (agree: Int, sameCountry: Int, total: Int)] = [:]
    var misses: [String: Int] = [:]
    for fields in lines("reference-regions.tsv") {
        let point = Coordinate(latitude: Double(fields[0])!, longitude: Double(fields[1])!)!
        let country = String(fields[2])
        let answer = index.places(at: point, within: 0, countryCode: country)
        total += 1
        let same = answer.region.value?.code == String(fields[3]) && answer.region.value?.source == .polygon
        if same {
            agree += 1
        } else {
            misses["\(fields[3]) -> \(answer.region.value?.code ?? "none")", default: 0] += 1
        }
        byCountry[country, default: (0, 0, 0)].total += 1
        if same { byCountry[country, default: (0, 0, 0)].agree += 1 }
        if countries.country(at: point)?.code == country { byCountry[country, default: (0, 0, 0)].sameCountry += 1 }
    }
    print(
        String(
            format: "region polygons vs shapely: %d of %d random points agree (%.3f %%)",
            agree,
            total,
            100 * Double(agree) / Double(total)
        )
            + (misses.isEmpty
                ? ""
                : "; differ: "
                    + misses.sorted { $0.value > $1.value }.prefix(5).map { "\($0.key) \($0.value)" }.joined(
                        separator: ", "
                    ))
    )
    print(
        "  of them in the same country by the country index: "
            + byCountry.sorted { $0.key < $1.key }.map {
                String(format: "%@ %.1f %%", $0.key, 100 * Double($0.value.sameCountry) / Double($0.value.total))
            }.joined(separator: ", ")
    )

    // Coverage: random points the country index puts in a covered country, answered from a polygon.
    var covered: [String: (polygon: Int, total: Int)] = [:]
    var random = SplitMix64(seed: 21)
    while covered.values.reduce(0, { $0 + $1.total }) < 50_000 {
        let point = Coordinate(latitude: random.uniform(-45, 72), longitude: random.uniform(-180, 180))!
        guard let code = countries.country(at: point)?.code, ["AU", "BE", "CA", "CN", "US"].contains(code) else {
            continue
        }
        covered[code, default: (0, 0)].total += 1
        if index.places(at: point, within: 0, countryCode: code).region.value?.source == .polygon {
            covered[code, default: (0, 0)].polygon += 1
        }
    }
    print(
        "  points of those countries (by the country index) with a polygon region: "
            + covered.sorted { $0.key < $1.key }.map {
                String(format: "%@ %.2f %%", $0.key, 100 * Double($0.value.polygon) / Double($0.value.total))
            }.joined(separator: ", ")
    )

    // Nearest-place regions: every tenth place held out of an index built without polygons.
    let placesText = try String(contentsOf: directory.appendingPathComponent("places.tsv"), encoding: .utf8)
    let regionsText = try String(contentsOf: directory.appendingPathComponent("regions.tsv"), encoding: .utf8)
    var kept: [Substring] = []
    var heldOut: [[Substring]] = []
    for (number, line) in placesText.split(separator: "\n").enumerated() {
        if number % 10 == 3 {
            heldOut.append(line.split(separator: "\t", omittingEmptySubsequences: false))
        } else {
            kept.append(line)
        }
    }
    let without = try PlaceIndex(
        bytes: try PlaceIndexBuilder.build(
            .init(
                places: kept.joined(separator: "\n"),
                regions: regionsText,
                timeZones: [],
                regionBoundaries: [],
                description: "held-out"
            )
        )
    )
    var perCountry: [String: (agree: Int, total: Int)] = [:]
    for fields in heldOut where !fields[5].isEmpty {
        let point = Coordinate(latitude: Double(fields[2])!, longitude: Double(fields[3])!)!
        let country = String(fields[4])
        let answer = without.places(at: point, within: 0, countryCode: country)
        perCountry[country, default: (0, 0)].total += 1
        if answer.region.value?.code == String(fields[5]) { perCountry[country, default: (0, 0)].agree += 1 }
    }
    let sumAgree = perCountry.values.reduce(0) { $0 + $1.agree }
    let sumTotal = perCountry.values.reduce(0) { $0 + $1.total }
    let large = perCountry.filter { $0.value.total >= 200 }.sorted { $0.value.total > $1.value.total }
    print(
        String(
            format: "nearest-place regions on %d held-out places: %.2f %% agree; ",
            sumTotal,
            100 * Double(sumAgree) / Double(sumTotal)
        )
            + "by country (200+ held out): "
            + large.map { String(format: "%@ %.1f", $0.key, 100 * Double($0.value.agree) / Double($0.value.total)) }
            .joined(separator: ", ")
    )
}

/// Random points on land (those the country index gives a country), for the lookup and the tracker.
func landPoints(_ count: Int, seed: UInt64) -> [(Coordinate, String)] {
    var random = SplitMix64(seed: seed)
    var points: [(Coordinate, String)] = []
    while points.count < count {
        let point = Coordinate(latitude: random.uniform(-56, 72), longitude: random.uniform(-180, 180))!
        if let country = countries.country(at: point)?.code { points.append((point, country)) }
    }
    return points
}

/// Points within about 5 km of random GeoNames places, with their country: where fleets mostly are.
func pointsNearPlaces(_ count: Int, seed: UInt64) -> [(Coordinate, String)] {
    let places = lines("places.tsv")
    var random = SplitMix64(seed: seed)
    var points: [(Coordinate, String)] = []
    while points.count < count {
        let place = places[random.next(below: places.count)]
        guard let latitude = Double(place[2]), let longitude = Double(place[3]),
            let point = Coordinate(
                latitude: max(-90, min(90, latitude + random.uniform(-0.045, 0.045))),
                longitude: max(-180, min(180, longitude + random.uniform(-0.06, 0.06)))
            ),
            let country = countries.country(at: point)?.code
        else { continue }
        points.append((point, country))
    }
    return points
}

if runs("lookup") {
    for (distribution, points) in [
        ("random land points", landPoints(200_000, seed: 5)),
        ("points within 5 km of a place", pointsNearPlaces(200_000, seed: 6)),
    ] {
        print("\(distribution):")
        var sink = 0
        for (name, body) in [
            (
                "region + locality + time zone",
                { (point: Coordinate, country: String) in
                    let answer = index.places(at: point, within: 0, countryCode: country)
                    sink &+= answer.locality?.geonameId ?? 0
                }
            ),
            (
                "the same, 50 m accuracy",
                { (point: Coordinate, country: String) in
                    let answer = index.places(at: point, within: 50, countryCode: country)
                    sink &+= answer.locality?.geonameId ?? 0
                }
            ),
            (
                "time zone alone",
                { (point: Coordinate, _: String) in sink &+= index.timeZone(at: point)?.utf8.count ?? 0 }
            ),
            (
                "region alone",
                { (point: Coordinate, country: String) in
                    sink &+= index.region(at: point, within: 0, countryCode: country).value?.code.utf8.count ?? 0
                }
            ),
            (
                "region alone, 50 m accuracy",
                { (point: Coordinate, country: String) in
                    sink &+= index.region(at: point, within: 50, countryCode: country).value?.code.utf8.count ?? 0
                }
            ),
            (
                "locality alone",
                { (point: Coordinate, country: String) in
                    sink &+= index.locality(near: point, countryCode: country)?.geonameId ?? 0
                }
            ),
            (
                "time zone, 50 m accuracy",
                { (point: Coordinate, _: String) in
                    sink &+= index.timeZone(at: point, within: 50).value?.utf8.count ?? 0
                }
            ),
            (
                "country (for comparison)",
                { (point: Coordinate, _: String) in sink &+= countries.countryNumber(at: point) ?? 0 }
            ),
        ] as [(String, (Coordinate, String) -> Void)] {
            for (point, country) in points.prefix(10_000) { body(point, country) }
            let time = seconds { for (point, country) in points { body(point, country) } }
            print(String(format: "  lookup, %@: %.0f ns per point", name, time / Double(points.count) * 1e9))
        }
        if sink == 42 { print("") }
    }
}

if runs("tracker") {
    // 20,000 devices from random land points, the same positions with places off and on, moving two ways: driving
    // 100 m a fix (a fix stays in the area of the last lookup), and jumping 3.7 km back and forth as service-bench's
    // devices do (every fix leaves that area, so every fix looks its region and time zone up).
    let starts = landPoints(20_000, seed: 9)
    let movements: [(name: String, degreesEast: (_ fix: Int) -> Double)] = [
        ("driving 100 m a fix", { Double($0) * 0.0013 }),
        ("jumping 3.7 km back and forth", { Double($0 % 2) * 0.05 }),
    ]
    for (movement, degreesEast) in movements {
        var positions: [Position] = []
        for fix in 0..<25 {
            for (device, (start, _)) in starts.enumerated() {
                let east = degreesEast(fix)
                positions.append(
                    Position(
                        deviceId: "device-\(device)",
                        coordinate: Coordinate(latitude: start.latitude, longitude: start.longitude + east)!,
                        timestamp: Int64(1_795_000_000_000 + fix * 10_000),
                        accuracy: 10
                    )
                )
            }
        }
        for round in 0..<2 {
            for places in [false, true] {
                let (nanoseconds, produced) = try trackerCost(positions, places: places ? index : nil)
                if round == 1 {
                    print(
                        String(
                            format: "tracker with the bundled countries, %@, places %@: %.0f ns per position "
                                + "(%d events from %d positions)",
                            movement,
                            places ? "on" : "off",
                            nanoseconds,
                            produced,
                            positions.count
                        )
                    )
                }
            }
        }
    }
}

/// The tracker's time per position over `positions`, and how many events it gave.
func trackerCost(_ positions: [Position], places: PlaceIndex?) throws -> (nanoseconds: Double, events: Int) {
    var registry = DeviceRegistry(
        tracker: DeviceTracker(countries: countries, languages: try CountryLanguages.bundled(), places: places)
    )
    var events: [DeviceEvent] = []
    var produced = 0
    let time = seconds {
        for (offset, position) in positions.enumerated() {
            _ = registry.apply(
                position,
                origin: MessageOrigin(topic: "positions", partition: 0, offset: Int64(offset), timestamp: 0),
                events: &events
            )
            produced += events.count
            events.removeAll(keepingCapacity: true)
        }
    }
    return (time / Double(positions.count) * 1e9, produced)
}

/// Runs `geoworker` with `arguments`, its output to /dev/null; returns the seconds it took as a whole process.
func timedGeoworker(_ arguments: [String]) throws -> Double {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: ".build/release/geoworker")
    process.arguments = arguments
    process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
    return try seconds {
        try process.run()
        process.waitUntilExit()
    }
}

if runs("geocode") {
    let input = FileManager.default.temporaryDirectory.appendingPathComponent("places-bench-\(getpid()).csv")
    defer { try? FileManager.default.removeItem(at: input) }
    // Issue 49's figure: 400,000 points uniform in latitude -60..75 and longitude -180..180, the median of 5 runs.
    let target = 400_000
    var uniform = SplitMix64(seed: 49)
    try (0..<target).map { _ in String(format: "%.5f,%.5f\n", uniform.uniform(-60, 75), uniform.uniform(-180, 180)) }
        .joined().write(to: input, atomically: true, encoding: .utf8)
    let runs = try (0..<5).map { _ in try timedGeoworker(["geocode", "--places", "--input", input.path]) }.sorted()
    print(
        String(
            format: "geoworker geocode --places, 400k points uniform in lat -60..75: %.2f us a line (median of 5 runs, "
                + "whole process, index load included; runs %@ s); goal at most 2 us",
            runs[2] / Double(target) * 1e6,
            runs.map { String(format: "%.2f", $0) }.joined(separator: ", ")
        )
    )
    let count = 1_000_000
    var random = SplitMix64(seed: 12)
    let randomPoints = (0..<count).map { _ in
        String(format: "%.5f,%.5f\n", random.uniform(-56, 72), random.uniform(-180, 180))
    }
    let nearPlaces = pointsNearPlaces(count, seed: 13).map {
        String(format: "%.5f,%.5f\n", $0.0.latitude, $0.0.longitude)
    }
    for (distribution, points) in [("random points, 70 % at sea", randomPoints), ("points near places", nearPlaces)] {
        try points.joined().write(to: input, atomically: true, encoding: .utf8)
        for arguments in [["geocode", "--input", input.path], ["geocode", "--places", "--input", input.path]] {
            let time = try timedGeoworker(arguments)
            print(
                String(
                    format: "geoworker %@, 1M %@: %.2f s, %.0f k lines/s, whole process (index load included)",
                    arguments.dropLast().joined(separator: " "),
                    distribution,
                    time,
                    Double(count) / time / 1000
                )
            )
        }
    }
}
