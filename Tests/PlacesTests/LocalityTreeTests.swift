import Foundation
import GeoCore
import TestSupport
import Testing

@testable import Places

/// The places' k-d tree against a scan of every place: the same nearest place for every filter and limit.
@Suite("Nearest-place search", .timeLimit(.minutes(5)))
struct LocalityTreeTests {
    /// Countries of random places, their regions in bands of longitude (so that whole subtrees share one region, or
    /// have none, as real countries' places do), one country without regions, one small, one empty.
    static func makeTree() -> LocalityTree {
        var random = SplitMix64(seed: 31)
        var nodes: [LocalityTree.Node] = []
        var regionOfPlace: [UInt16] = []
        var countryRanges: [Range<Int>] = []
        for (count, regionCount) in [(3000, 5), (600, 0), (40, 2), (0, 0), (900, 1)] {
            let start = nodes.count
            let centre = (latitude: random.uniform(-50, 50), longitude: random.uniform(-170, 170))
            for _ in 0..<count {
                let coordinate = Coordinate(
                    latitude: centre.latitude + random.uniform(-3, 3),
                    longitude: centre.longitude + random.uniform(-4, 4)
                )!
                let point = LocalityTree.unitVector(coordinate)
                let band = Int((coordinate.longitude - centre.longitude + 4) / 8 * Double(regionCount + 1))
                // The last band has no region: some subtrees hold none, some both.
                let region = regionCount == 0 || band >= regionCount ? LocalityTree.noRegion : UInt16(band)
                nodes.append(LocalityTree.Node(x: point.x, y: point.y, z: point.z, place: UInt32(nodes.count)))
                regionOfPlace.append(region)
            }
            countryRanges.append(start..<nodes.count)
        }
        var axes = [UInt8](repeating: 0, count: nodes.count)
        for range in countryRanges { LocalityTree.layOut(&nodes, axes: &axes, range: range) }
        return LocalityTree(
            nodes: nodes,
            axes: axes,
            regions: nodes.map { regionOfPlace[Int($0.place)] },
            countryRanges: countryRanges
        )
    }

    /// The nearest accepted node nearer than `limit` by scanning every one; ties to the earlier node.
    static func scan(
        _ tree: LocalityTree,
        _ point: SIMD3<Float>,
        country: Int,
        accepts: (UInt16) -> Bool,
        limit: Float
    ) -> (node: Int, chordSquared: Float)? {
        var best: (node: Int, chordSquared: Float)?
        for index in tree.countryRanges[country] where accepts(tree.regions[index]) {
            let node = tree.nodes[index]
            let offset = point - SIMD3(node.x, node.y, node.z)
            let distance = (offset * offset).sum()
            if distance < (best?.chordSquared ?? limit) { best = (index, distance) }
        }
        return best
    }

    @Test("every filter and limit finds the place a scan of all finds, in every country")
    func agreesWithAScan() {
        let tree = Self.makeTree()
        var random = SplitMix64(seed: 32)
        var compared = 0
        var mismatches: [String] = []
        for country in tree.countryRanges.indices {
            let range = tree.countryRanges[country]
            for _ in 0..<400 {
                // Near one of the country's places (or anywhere, for the empty one).
                let near = range.isEmpty ? nil : tree.nodes[range.lowerBound + Int(random.next() % UInt64(range.count))]
                var shift = SIMD3<Float>(repeating: 0)
                for axis in 0..<3 { shift[axis] = Float(random.uniform(-0.02, 0.02)) }
                let point =
                    near.map { SIMD3($0.x, $0.y, $0.z) + shift }
                    ?? LocalityTree.unitVector(Coordinate(latitude: random.uniform(-60, 60), longitude: 0)!)
                let someRegion = UInt16(random.next() % 6)
                let filters: [(LocalityTree.Filter, (UInt16) -> Bool)] = [
                    (.any, { _ in true }),
                    (.withRegion, { $0 != LocalityTree.noRegion }),
                    (.regionOtherThan(someRegion), { $0 != LocalityTree.noRegion && $0 != someRegion }),
                ]
                let limit: Float = random.next() % 2 == 0 ? .infinity : Float(random.uniform(0, 0.001))
                for (filter, accepts) in filters {
                    let found = tree.nearest(to: point, inCountry: country, filter: filter, within: limit)
                    let expected = Self.scan(tree, point, country: country, accepts: accepts, limit: limit)
                    compared += 1
                    if found?.node != expected?.node || found?.chordSquared != expected?.chordSquared {
                        mismatches.append(
                            "country \(country) \(filter): \(String(describing: found)) vs \(String(describing: expected))"
                        )
                    }
                }
            }
        }
        #expect(compared == 6000)
        #expect(mismatches.count == 0, "\(mismatches.prefix(5))")
    }

    @Test("a point no country claims gets the nearest place of all, as a scan of every country finds it")
    func anywhereAgreesWithAScan() {
        let tree = Self.makeTree()
        var random = SplitMix64(seed: 33)
        var mismatches: [String] = []
        for trial in 0..<4000 {
            // Half over the whole globe, half among the places.
            let near = tree.nodes[Int(random.uniform(0, Double(tree.nodes.count - 1)))]
            let coordinate =
                trial % 2 == 0
                ? Coordinate(latitude: random.uniform(-90, 90), longitude: random.uniform(-180, 180))!
                : Coordinate(
                    latitude: max(-90, min(90, Double(asin(near.z)) * 180 / .pi + random.uniform(-2, 2))),
                    longitude: Double(atan2(near.y, near.x)) * 180 / .pi
                )!
            let point = LocalityTree.unitVector(coordinate)
            let expected = tree.countryRanges.indices
                .compactMap { Self.scan(tree, point, country: $0, accepts: { _ in true }, limit: .infinity) }
                .min { $0.chordSquared < $1.chordSquared }
            let found = tree.nearestAnywhere(to: point)
            if found?.chordSquared != expected?.chordSquared {
                mismatches.append("\(String(describing: found)) vs \(String(describing: expected))")
            }
        }
        #expect(mismatches.count == 0, "\(mismatches.count) of 4000: \(mismatches.prefix(3))")
    }
}
