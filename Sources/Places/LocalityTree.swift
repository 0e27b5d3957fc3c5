import GeoCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The populated places of every country, each country's in a k-d tree of its own, for nearest-place searches.
///
/// Places are points on the unit sphere (x, y, z): the nearest by straight chord is the nearest by great-circle
/// distance, and the antimeridian and the poles are no special case. Each country's places occupy one range of the
/// node array, laid out as an implicit balanced tree: the node in the middle of a range splits it on its axis (the
/// one along which the range's points spread most, kept in ``axes``), the halves before and after it are its
/// subtrees. The builder lays the tree out; a search descends the nearer half first and visits the farther one only
/// when the splitting plane is nearer than the best place found.
struct LocalityTree: Sendable {
    /// One place as the search sees it: its unit vector and its position in the place table.
    struct Node: Sendable {
        var x: Float
        var y: Float
        var z: Float
        var place: UInt32
    }

    /// What a search accepts.
    enum Filter {
        case any
        /// Places with a known region.
        case withRegion
        /// Places with a known region other than this one.
        case regionOtherThan(UInt16)
    }

    let nodes: [Node]
    /// The splitting axis of each node (0, 1, 2 for x, y, z).
    let axes: [UInt8]
    /// The region of each node's place, ``noRegion`` for none: read by the filters without a trip to the places.
    let regions: [UInt16]
    /// Each country's range of ``nodes``, by country number.
    let countryRanges: [Range<Int>]
    /// Each country's bounding sphere in chord space (its centre and radius), for searches across countries.
    private let bounds: [(centre: SIMD3<Float>, radius: Float)]
    /// The one region of all the places of each subtree, kept at its node (a leaf's: at its first place).
    ///
    /// ``noRegion`` for none, ``mixedRegions`` for several. A search for another region than one, or for any region,
    /// skips a subtree that has none to offer: most of a region's clearance was its rival search walking every place
    /// of its own region within twice the reach.
    private let subtreeRegions: [UInt16]

    static let noRegion = UInt16.max
    /// A subtree's places have more than one region (or some have one and some none).
    static let mixedRegions = UInt16.max - 1
    /// Ranges of at most this many places are leaves, scanned whole in the order the builder left them.
    ///
    /// The search is bound by fetching nodes from memory, not by measuring them: a leaf's places share a few cache
    /// lines where the tree's last levels would each have been a fetch of its own.
    static let leafSize = 32

    init(nodes: [Node], axes: [UInt8], regions: [UInt16], countryRanges: [Range<Int>]) {
        self.nodes = nodes
        self.axes = axes
        self.regions = regions
        self.countryRanges = countryRanges
        bounds = countryRanges.map { range in
            guard !range.isEmpty else { return (SIMD3<Float>(0, 0, 0), 0) }
            var sum = SIMD3<Double>(0, 0, 0)
            for node in nodes[range] { sum += SIMD3(Double(node.x), Double(node.y), Double(node.z)) }
            let centre = SIMD3<Float>(sum / Double(range.count))
            let radius = nodes[range].map { Self.chordSquared(centre, $0).squareRoot() }.max() ?? 0
            return (centre, radius * 1.000_001 + 1e-6)
        }
        var subtreeRegions = [UInt16](repeating: Self.mixedRegions, count: nodes.count)
        for range in countryRanges where !range.isEmpty {
            Self.summarize(range, regions: regions, into: &subtreeRegions)
        }
        self.subtreeRegions = subtreeRegions
    }

    /// Fills in `summary` for `range` (not empty) and every subtree in it; returns the range's own.
    @discardableResult
    private static func summarize(_ range: Range<Int>, regions: [UInt16], into summary: inout [UInt16]) -> UInt16 {
        func joined(_ first: UInt16, _ second: UInt16) -> UInt16 { first == second ? first : mixedRegions }
        guard range.count > leafSize else {
            let region = regions[range].dropFirst().reduce(regions[range.lowerBound], joined)
            summary[range.lowerBound] = region
            return region
        }
        let middle = range.lowerBound + range.count / 2
        let region = joined(
            joined(regions[middle], summarize(range.lowerBound..<middle, regions: regions, into: &summary)),
            summarize((middle + 1)..<range.upperBound, regions: regions, into: &summary)
        )
        summary[middle] = region
        return region
    }

    /// The point on the unit sphere of a coordinate.
    static func unitVector(_ coordinate: Coordinate) -> SIMD3<Float> {
        let latitude = coordinate.latitude * .pi / 180
        let longitude = coordinate.longitude * .pi / 180
        return SIMD3(Float(cos(latitude) * cos(longitude)), Float(cos(latitude) * sin(longitude)), Float(sin(latitude)))
    }

    /// The chord (straight line through the sphere) in metres' terms: the great-circle distance of a squared chord.
    static func metres(chordSquared: Float) -> Double {
        2 * Coordinate.earthRadius * asin(min(1, Double(chordSquared).squareRoot() / 2))
    }

    /// The squared chord that a great-circle distance of `metres` spans.
    static func chordSquared(metres: Double) -> Float {
        let chord = 2 * sin(min(.pi / 2, metres / (2 * Coordinate.earthRadius)))
        return Float(chord * chord)
    }

    private static func chordSquared(_ point: SIMD3<Float>, _ node: Node) -> Float {
        let dx = point.x - node.x
        let dy = point.y - node.y
        let dz = point.z - node.z
        return dx * dx + dy * dy + dz * dz
    }

    /// The node nearest `point` among `country`'s places that `filter` accepts, nearer than `limit` (a squared
    /// chord), with its squared chord; ties go to the node earlier in the array.
    func nearest(
        to point: SIMD3<Float>,
        inCountry country: Int,
        filter: Filter,
        within limit: Float = .infinity
    ) -> (node: Int, chordSquared: Float)? {
        var best: (node: Int, chordSquared: Float)? = nil
        var bound = limit
        search(point, countryRanges[country], filter, &best, &bound)
        return best
    }

    /// The node nearest `point` among all places (for a point no country claims): countries are searched nearest
    /// bounding sphere first, and a country whose sphere lies beyond the best place found is skipped.
    func nearestAnywhere(to point: SIMD3<Float>) -> (node: Int, chordSquared: Float)? {
        // The countries' gaps (how near their spheres come), visited nearest first by picking the least left each
        // time: the best place is usually in one of the first few, after which every gap left exceeds it (a sort of
        // all 246 was most of a sea point's lookup).
        withUnsafeTemporaryAllocation(of: Float.self, capacity: bounds.count) { gaps in
            for (country, (centre, radius)) in bounds.enumerated() {
                let offset = point - centre
                let gap = max(0, (offset * offset).sum().squareRoot() - radius)
                gaps[country] = countryRanges[country].isEmpty ? .infinity : gap * gap
            }
            var best: (node: Int, chordSquared: Float)? = nil
            var bound = Float.infinity
            while true {
                var nearest = -1
                var nearestGap = Float.infinity
                for country in 0..<gaps.count where gaps[country] < nearestGap {
                    nearest = country
                    nearestGap = gaps[country]
                }
                guard nearest >= 0, nearestGap <= bound else { return best }
                gaps[nearest] = .infinity
                search(point, countryRanges[nearest], .any, &best, &bound)
            }
        }
    }

    private func search(
        _ point: SIMD3<Float>,
        _ range: Range<Int>,
        _ filter: Filter,
        _ best: inout (node: Int, chordSquared: Float)?,
        _ bound: inout Float
    ) {
        guard !range.isEmpty else { return }
        let middle = range.lowerBound + range.count / 2
        guard offers(range.count > Self.leafSize ? middle : range.lowerBound, filter) else { return }
        guard range.count > Self.leafSize else {
            for index in range {
                let distance = Self.chordSquared(point, nodes[index])
                if distance < bound && accepts(index, filter) {
                    best = (index, distance)
                    bound = distance
                }
            }
            return
        }
        let node = nodes[middle]
        let distance = Self.chordSquared(point, node)
        if distance < bound && accepts(middle, filter) {
            best = (middle, distance)
            bound = distance
        }
        let along: Float
        switch axes[middle] {
        case 0: along = point.x - node.x
        case 1: along = point.y - node.y
        default: along = point.z - node.z
        }
        let below = range.lowerBound..<middle
        let above = (middle + 1)..<range.upperBound
        search(point, along < 0 ? below : above, filter, &best, &bound)
        if along * along < bound { search(point, along < 0 ? above : below, filter, &best, &bound) }
    }

    /// Whether the subtree summarized at `key` may hold a place that `filter` accepts.
    private func offers(_ key: Int, _ filter: Filter) -> Bool {
        switch filter {
        case .any: return true
        case .withRegion: return subtreeRegions[key] != Self.noRegion
        case .regionOtherThan(let region):
            return subtreeRegions[key] != Self.noRegion && subtreeRegions[key] != region
        }
    }

    private func accepts(_ node: Int, _ filter: Filter) -> Bool {
        switch filter {
        case .any: return true
        case .withRegion: return regions[node] != Self.noRegion
        case .regionOtherThan(let region): return regions[node] != Self.noRegion && regions[node] != region
        }
    }
}

extension LocalityTree {
    /// Lays out one country's places (`nodes[range]`, in any order) as an implicit balanced k-d tree, in place.
    ///
    /// Deterministic: ties in a coordinate keep the places' order by their position in the place table.
    static func layOut(_ nodes: inout [Node], axes: inout [UInt8], range: Range<Int>) {
        guard range.count > leafSize else { return }
        var low = SIMD3<Float>(repeating: .infinity)
        var high = SIMD3<Float>(repeating: -.infinity)
        for node in nodes[range] {
            let point = SIMD3(node.x, node.y, node.z)
            low = pointwiseMin(low, point)
            high = pointwiseMax(high, point)
        }
        let spread = high - low
        let axis: UInt8 = spread.x >= spread.y && spread.x >= spread.z ? 0 : (spread.y >= spread.z ? 1 : 2)
        let key: (Node) -> Float = axis == 0 ? { $0.x } : (axis == 1 ? { $0.y } : { $0.z })
        nodes[range].sort { (key($0), $0.place) < (key($1), $1.place) }
        let middle = range.lowerBound + range.count / 2
        axes[middle] = axis
        layOut(&nodes, axes: &axes, range: range.lowerBound..<middle)
        layOut(&nodes, axes: &axes, range: (middle + 1)..<range.upperBound)
    }
}
