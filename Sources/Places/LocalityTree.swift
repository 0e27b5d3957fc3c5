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
    /// Every place in one k-d tree of its own, for a point no country claims (at sea): each node's `place` is its
    /// node number in ``nodes``.
    ///
    /// Searched country by country instead, nearest bounding sphere first, a point far out at sea searched the trees
    /// of every country whose sphere came within its distance of the nearest place: most of `geocode --places`' time
    /// over random points of the globe.
    let anywhere: [Node]
    /// The splitting axis of each node of ``anywhere``.
    let anywhereAxes: [UInt8]
    /// The box (least and greatest corner) around each subtree of ``anywhere``, kept at its node (a leaf's: at its
    /// first place): a search far out at sea, whose best distance is long, skips a subtree whose box lies beyond it
    /// where its splitting plane alone would not.
    private let anywhereBoxes: [(low: SIMD3<Float>, high: SIMD3<Float>)]
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

    /// - Parameters:
    ///   - nodes: the places, each country's laid out as its k-d tree (``layOut(_:axes:range:)``).
    ///   - axes: the splitting axis of each node.
    ///   - regions: the region of each node's place, ``noRegion`` for none.
    ///   - countryRanges: each country's range of `nodes`.
    ///   - anywhereOrder: the node numbers of ``anywhere``'s tree in its order, with its axes, as the builder laid
    ///     them out (``layOutAnywhere(_:)``); nil to lay them out here.
    init(
        nodes: [Node],
        axes: [UInt8],
        regions: [UInt16],
        countryRanges: [Range<Int>],
        anywhereOrder: (order: [UInt32], axes: [UInt8])? = nil
    ) {
        self.nodes = nodes
        self.axes = axes
        self.regions = regions
        self.countryRanges = countryRanges
        let layout = anywhereOrder ?? Self.layOutAnywhere(nodes)
        anywhere = layout.order.map { number in
            let node = nodes[Int(number)]
            return Node(x: node.x, y: node.y, z: node.z, place: number)
        }
        anywhereAxes = layout.axes
        var boxes = [(low: SIMD3<Float>, high: SIMD3<Float>)](
            repeating: (SIMD3(repeating: 0), SIMD3(repeating: 0)),
            count: anywhere.count
        )
        if !anywhere.isEmpty { Self.box(anywhere.indices, of: anywhere, into: &boxes) }
        anywhereBoxes = boxes
        var subtreeRegions = [UInt16](repeating: Self.mixedRegions, count: nodes.count)
        for range in countryRanges where !range.isEmpty {
            Self.summarize(range, regions: regions, into: &subtreeRegions)
        }
        self.subtreeRegions = subtreeRegions
    }

    /// Fills in `boxes` for `range` (not empty) and every subtree in it; returns the range's own.
    @discardableResult
    private static func box(
        _ range: Range<Int>,
        of nodes: [Node],
        into boxes: inout [(low: SIMD3<Float>, high: SIMD3<Float>)]
    ) -> (low: SIMD3<Float>, high: SIMD3<Float>) {
        func point(_ index: Int) -> SIMD3<Float> { SIMD3(nodes[index].x, nodes[index].y, nodes[index].z) }
        guard range.count > leafSize else {
            var found = (low: point(range.lowerBound), high: point(range.lowerBound))
            for index in range.dropFirst() {
                found = (pointwiseMin(found.low, point(index)), pointwiseMax(found.high, point(index)))
            }
            boxes[range.lowerBound] = found
            return found
        }
        let middle = range.lowerBound + range.count / 2
        var found = (low: point(middle), high: point(middle))
        for half in [range.lowerBound..<middle, (middle + 1)..<range.upperBound] where !half.isEmpty {
            let inner = box(half, of: nodes, into: &boxes)
            found = (pointwiseMin(found.low, inner.low), pointwiseMax(found.high, inner.high))
        }
        boxes[middle] = found
        return found
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

    /// How far `point` lies beyond `node`'s splitting plane on `axis` (negative: below it).
    private static func offset(of point: SIMD3<Float>, from node: Node, along axis: UInt8) -> Float {
        switch axis {
        case 0: return point.x - node.x
        case 1: return point.y - node.y
        default: return point.z - node.z
        }
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

    /// The node nearest `point` among all places (for a point no country claims), searched in ``anywhere``.
    func nearestAnywhere(to point: SIMD3<Float>) -> (node: Int, chordSquared: Float)? {
        guard !anywhere.isEmpty else { return nil }
        return anywhere.withUnsafeBufferPointer { nodes in
            anywhereAxes.withUnsafeBufferPointer { axes in
                anywhereBoxes.withUnsafeBufferPointer { boxes in
                    var search = AnywhereSearch(point: point, nodes: nodes, axes: axes, boxes: boxes)
                    search.visit(0..<nodes.count)
                    return (Int(nodes[search.best].place), search.bound)
                }
            }
        }
    }

    /// A search of ``anywhere`` over its tables' memory: every point at sea searches it, two thirds of random points,
    /// and at sea it visits hundreds of nodes, each of which the countries' search would check against its arrays'
    /// bounds and its filter.
    private struct AnywhereSearch {
        let point: SIMD3<Float>
        let nodes: UnsafeBufferPointer<Node>
        let axes: UnsafeBufferPointer<UInt8>
        let boxes: UnsafeBufferPointer<(low: SIMD3<Float>, high: SIMD3<Float>)>
        var best = 0
        var bound = Float.infinity

        /// Searches the subtree laid out in `range` (not empty) as a country's search does, skipping subtrees whose
        /// box lies beyond the best distance.
        mutating func visit(_ range: Range<Int>) {
            let middle = range.lowerBound + range.count / 2
            let key = range.count > leafSize ? middle : range.lowerBound
            let (low, high) = boxes[key]
            let dx = max(low.x - point.x, point.x - high.x, 0)
            let dy = max(low.y - point.y, point.y - high.y, 0)
            let dz = max(low.z - point.z, point.z - high.z, 0)
            guard dx * dx + dy * dy + dz * dz < bound else { return }
            guard range.count > leafSize else {
                for index in range {
                    let distance = chordSquared(point, nodes[index])
                    if distance < bound { (best, bound) = (index, distance) }
                }
                return
            }
            let node = nodes[middle]
            let distance = chordSquared(point, node)
            if distance < bound { (best, bound) = (middle, distance) }
            let along = offset(of: point, from: node, along: axes[middle])
            let below = range.lowerBound..<middle
            let above = (middle + 1)..<range.upperBound
            let (near, far) = along < 0 ? (below, above) : (above, below)
            if !near.isEmpty { visit(near) }
            if along * along < bound && !far.isEmpty { visit(far) }
        }
    }

    /// The search of a country's tree in `range`: the nearer half first, the farther one only when its splitting
    /// plane is nearer than the best place found, subtrees without a place `filter` accepts skipped.
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
        let along = Self.offset(of: point, from: node, along: axes[middle])
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
    /// Lays out every place of `nodes` (the countries' trees) as one k-d tree: its node numbers in the tree's order
    /// and its axes (``anywhere``).
    static func layOutAnywhere(_ nodes: [Node]) -> (order: [UInt32], axes: [UInt8]) {
        var all = nodes.enumerated().map { number, node in Node(x: node.x, y: node.y, z: node.z, place: UInt32(number))
        }
        var axes = [UInt8](repeating: 0, count: all.count)
        layOut(&all, axes: &axes, range: all.indices)
        return (all.map(\.place), axes)
    }

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
