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
    /// The boxes (least and greatest corners) around the two subtrees of each of ``anywhere``'s splitting nodes,
    /// numbered as a heap (the root 0, the children of `n` at `2n + 1` and `2n + 2`).
    ///
    /// A search far out at sea, whose best distance is long, enters the subtree whose box is nearer first and skips
    /// one whose box lies beyond the best distance, where its splitting plane alone would not. Both boxes sit
    /// together, so a splitting node costs one fetch for both.
    private let anywhereChildBoxes: [ChildBoxes]
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
    ///   - anywhereOrder: the node numbers of ``anywhere``'s tree in its order, as the builder laid them out
    ///     (``layOutAnywhere(_:)``); nil to lay them out here.
    init(
        nodes: [Node],
        axes: [UInt8],
        regions: [UInt16],
        countryRanges: [Range<Int>],
        anywhereOrder: [UInt32]? = nil
    ) {
        self.nodes = nodes
        self.axes = axes
        self.regions = regions
        self.countryRanges = countryRanges
        anywhere = (anywhereOrder ?? Self.layOutAnywhere(nodes).order).map { number in
            let node = nodes[Int(number)]
            return Node(x: node.x, y: node.y, z: node.z, place: number)
        }
        var childBoxes: [ChildBoxes] = []
        Self.box(anywhere.indices, heap: 0, of: anywhere, into: &childBoxes)
        anywhereChildBoxes = childBoxes
        var subtreeRegions = [UInt16](repeating: Self.mixedRegions, count: nodes.count)
        for range in countryRanges where !range.isEmpty {
            Self.summarize(range, regions: regions, into: &subtreeRegions)
        }
        self.subtreeRegions = subtreeRegions
    }

    /// A box around places: its least and greatest corners (inside out when it holds none).
    struct Box {
        var low = SIMD3<Float>(repeating: .infinity)
        var high = SIMD3<Float>(repeating: -.infinity)

        mutating func add(_ other: Box) {
            low = pointwiseMin(low, other.low)
            high = pointwiseMax(high, other.high)
        }

        /// The squared distance from `point` to the nearest point of the box (infinite for an empty box).
        func chordSquared(from point: SIMD3<Float>) -> Float {
            let dx = max(low.x - point.x, point.x - high.x, 0)
            let dy = max(low.y - point.y, point.y - high.y, 0)
            let dz = max(low.z - point.z, point.z - high.z, 0)
            return dx * dx + dy * dy + dz * dz
        }
    }

    /// The boxes of a splitting node's two subtrees: the places before it in its range, and those after it.
    struct ChildBoxes {
        var below = Box()
        var above = Box()
    }

    /// Fills in `boxes` for the splitting nodes of `range` (numbered from `heap`); returns the range's box.
    @discardableResult
    private static func box(
        _ range: Range<Int>,
        heap: Int,
        of nodes: [Node],
        into boxes: inout [ChildBoxes]
    ) -> Box {
        func point(_ index: Int) -> Box {
            let point = SIMD3(nodes[index].x, nodes[index].y, nodes[index].z)
            return Box(low: point, high: point)
        }
        var found = Box()
        guard range.count > leafSize else {
            for index in range { found.add(point(index)) }
            return found
        }
        let middle = range.lowerBound + range.count / 2
        let children = ChildBoxes(
            below: box(range.lowerBound..<middle, heap: 2 * heap + 1, of: nodes, into: &boxes),
            above: box((middle + 1)..<range.upperBound, heap: 2 * heap + 2, of: nodes, into: &boxes)
        )
        if boxes.count <= heap { boxes.append(contentsOf: repeatElement(ChildBoxes(), count: heap + 1 - boxes.count)) }
        boxes[heap] = children
        found = point(middle)
        found.add(children.below)
        found.add(children.above)
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
        // The C library's cosine is a call the compiler does not share between two uses.
        let cosLatitude = cos(latitude)
        return SIMD3(Float(cosLatitude * cos(longitude)), Float(cosLatitude * sin(longitude)), Float(sin(latitude)))
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

    /// The node nearest `point` among all places (for a point no country claims), searched in ``anywhere``; ties go
    /// to the lower node number, whatever order the search met them in.
    func nearestAnywhere(to point: SIMD3<Float>) -> (node: Int, chordSquared: Float)? {
        guard !anywhere.isEmpty else { return nil }
        return anywhere.withUnsafeBufferPointer { nodes in
            anywhereChildBoxes.withUnsafeBufferPointer { boxes in
                var search = AnywhereSearch(point: point, nodes: nodes, boxes: boxes)
                search.visit(0..<nodes.count, heap: 0)
                return (Int(search.best), search.bound)
            }
        }
    }

    /// A search of ``anywhere`` over its tables' memory: every point at sea searches it, two thirds of random points,
    /// and at sea it visits hundreds of nodes, each of which the countries' search would check against its arrays'
    /// bounds and its filter.
    private struct AnywhereSearch {
        let point: SIMD3<Float>
        let nodes: UnsafeBufferPointer<Node>
        let boxes: UnsafeBufferPointer<ChildBoxes>
        /// The node number (``Node/place``) of the nearest place found.
        var best = UInt32.max
        var bound = Float.infinity

        /// Searches the subtree laid out in `range`, numbered `heap`, the subtree with the nearer box first; a subtree
        /// whose box lies beyond the best distance is skipped (one at the best distance is not: it may hold a tie).
        mutating func visit(_ range: Range<Int>, heap: Int) {
            guard range.count > leafSize else {
                for index in range { consider(index) }
                return
            }
            let middle = range.lowerBound + range.count / 2
            consider(middle)
            let children = boxes[heap]
            let below = range.lowerBound..<middle
            let above = (middle + 1)..<range.upperBound
            let belowBox = children.below.chordSquared(from: point)
            let aboveBox = children.above.chordSquared(from: point)
            if belowBox <= aboveBox {
                if belowBox <= bound { visit(below, heap: 2 * heap + 1) }
                if aboveBox <= bound { visit(above, heap: 2 * heap + 2) }
            } else {
                if aboveBox <= bound { visit(above, heap: 2 * heap + 2) }
                if belowBox <= bound { visit(below, heap: 2 * heap + 1) }
            }
        }

        @inline(__always)
        private mutating func consider(_ index: Int) {
            let distance = chordSquared(point, nodes[index])
            guard distance <= bound else { return }
            if distance < bound || nodes[index].place < best { (best, bound) = (nodes[index].place, distance) }
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
