import Countries
import Foundation
import TestSupport
import Testing

@testable import GeoCore

/// The area around a looked-up fix in which no border or coast lies: fixes inside it skip the lookup.
@Suite("Country areas: the lookups a moving device skips", .timeLimit(.minutes(5)))
struct CountryAreaTests {
    /// Places near borders and coasts, where the area matters: Basel's three countries, Geneva, the Vatican,
    /// Monaco, the Dutch-Belgian enclaves of Baarle, the Bosphorus, the antimeridian in Chukotka.
    static let places: [(Double, Double)] = [
        (47.56, 7.59), (46.20, 6.15), (41.9029, 12.4534), (43.7384, 7.4246), (51.44, 4.93), (41.04, 29.0),
        (66.0, 179.99), (48.58, 7.75), (50.77, 6.08), (45.76, 4.84),
    ]

    @Test("a fix whose disc lies inside the area decides the area's country, as its own lookup does")
    func fixesInsideAnAreaDecideItsCountry() {
        var random = SplitMix64(seed: 0xA4EA)
        var areas = 0
        var held = 0
        var wrong: [String] = []
        for _ in 0..<3_000 {
            let (latitude, longitude) = Self.places[random.next(below: Self.places.count)]
            let center = destination(
                from: Coordinate(latitude: latitude, longitude: longitude)!,
                distance: random.uniform(0, 30_000),
                bearing: random.uniform(0, 360)
            )
            let radius: Double = [0, 5, 10, 50, 300][random.next(below: 5)]
            let (country, clearance) = bundledIndex.country(at: center, within: radius, clearanceUpTo: 2_000)
            #expect(country == bundledIndex.country(at: center, within: radius), "\(center)")
            guard let clearance else { continue }
            #expect(clearance > radius && clearance <= 2_000)
            // No boundary nearer than the clearance: the whole circle decides the country.
            #expect(
                bundledIndex.country(at: center, within: clearance * 0.999) == country,
                "\(center): \(clearance) m clear"
            )
            areas += 1
            let area = CountryArea(center: center, clearance: clearance)
            for _ in 0..<20 {
                // Out to the area's edge and a little beyond, with discs of every size.
                let fix = destination(
                    from: center,
                    distance: random.uniform(0, clearance * 1.05),
                    bearing: random.uniform(0, 360)
                )
                let accuracy = random.uniform(0, clearance / 2)
                guard area.holds(fix, accuracy: accuracy) else { continue }
                held += 1
                let decided = bundledIndex.country(at: fix, within: accuracy)
                if decided != country {
                    wrong.append(
                        "\(fix) ±\(accuracy) m in the \(clearance) m area of \(center): \(decided?.code ?? "none")"
                    )
                }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) fixes decided otherwise, first: \(wrong.prefix(3))")
        #expect(areas > 500 && held > 5_000, "too few areas (\(areas)) or fixes inside them (\(held)) to tell")
    }

    @Test("no area at sea, across a border in reach of the disc, or where the reach is not beyond the disc")
    func noArea() {
        let atSea = Coordinate(latitude: 40.0, longitude: -40.0)!
        #expect(bundledIndex.country(at: atSea, within: 5, clearanceUpTo: 2_000).clearance == nil)
        // The Vatican is a few hundred metres across: Italy lies within 2 km of all of it.
        let vatican = Coordinate(latitude: 41.9035, longitude: 12.4530)!
        let inVatican = bundledIndex.country(at: vatican, within: 5, clearanceUpTo: 2_000)
        #expect(inVatican.country?.code == "VA")
        #expect(inVatican.clearance.map { $0 < 500 } ?? true)
        let lyon = Coordinate(latitude: 45.76, longitude: 4.84)!
        #expect(bundledIndex.country(at: lyon, within: 5, clearanceUpTo: 2_000).clearance == 2_000)
        #expect(bundledIndex.country(at: lyon, within: 3_000, clearanceUpTo: 2_000).clearance == nil)
    }

    /// Counts the lookups a tracker makes.
    final class CountingResolver: CountryResolver, @unchecked Sendable {
        let index: CountryIndex
        var lookups = 0
        var clearanceLookups = 0
        init(_ index: CountryIndex) { self.index = index }
        func countryCode(at coordinate: Coordinate) -> String? {
            lookups += 1
            return index.countryCode(at: coordinate)
        }
        func countryCode(at coordinate: Coordinate, within radius: Double) -> String? {
            lookups += 1
            return index.countryCode(at: coordinate, within: radius)
        }
        func countryCode(
            at coordinate: Coordinate,
            within radius: Double,
            clearanceUpTo reach: Double
        )
            -> (code: String?, clearance: Double?)
        {
            lookups += 1
            clearanceLookups += 1
            return index.countryCode(at: coordinate, within: radius, clearanceUpTo: reach)
        }
        func countryName(for code: String) -> String { index.countryName(for: code) }
    }

    @Test("devices wandering across borders get the same events with areas as with a lookup at every fix")
    func sameEventsWithAreas() {
        let counting = CountingResolver(bundledIndex)
        var registry = DeviceRegistry(tracker: DeviceTracker(countries: counting, languages: bundledLanguages))
        let plain = CountingResolver(bundledIndex)
        let everyFix = DeviceTracker(countries: plain, languages: bundledLanguages)
        var random = SplitMix64(seed: 0xB0DE)
        var fixes = 0
        for device in 0..<120 {
            let id = "wanderer-\(device)"
            let (latitude, longitude) = Self.places[device % Self.places.count]
            var here = destination(
                from: Coordinate(latitude: latitude, longitude: longitude)!,
                distance: random.uniform(0, 5_000),
                bearing: random.uniform(0, 360)
            )
            var heading = random.uniform(0, 360)
            var state = DeviceState(deviceId: id)
            for step in 0..<150 {
                heading += random.uniform(-30, 30)
                here = destination(from: here, distance: random.uniform(0, 400), bearing: heading)
                let position = Position(
                    deviceId: id,
                    coordinate: here,
                    timestamp: 1_000_000 + Int64(step) * 10_000,
                    accuracy: random.next(below: 5) == 0 ? 200 : random.uniform(3, 30)
                )
                let origin = MessageOrigin(topic: "positions", partition: 0, offset: Int64(fixes), timestamp: 0)
                fixes += 1
                var withAreas: [DeviceEvent] = []
                var withLookups: [DeviceEvent] = []
                _ = registry.apply(position, origin: origin, events: &withAreas)
                _ = everyFix.apply(position, origin: origin, to: &state, events: &withLookups)
                #expect(withAreas == withLookups, "\(id) at step \(step), \(here)")
            }
            #expect(registry.state(of: id)?.country == state.country)
        }
        // Without areas every fix is looked up; these devices move a few hundred metres a fix.
        #expect(counting.lookups < fixes / 2, "\(counting.lookups) lookups for \(fixes) fixes")
        // A caller that keeps no area is not made to pay for measuring one.
        #expect(plain.lookups == fixes && plain.clearanceLookups == 0)
    }
}
