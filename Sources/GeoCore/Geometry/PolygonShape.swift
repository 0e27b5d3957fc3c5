/// A polygon geofence: a GeoJSON (RFC 7946) Polygon or MultiPolygon, holes included.
///
/// As RFC 7946 says, edges are straight lines in longitude and latitude, so *inside* is decided in that
/// plane (the same answer as shapely or PostGIS geometry); distances to the edge are measured in metres in
/// a plane tangent at the point (``LocalPlane``), which maps those straight edges to straight edges.
/// Shapes that cross the antimeridian must be split there, as the RFC asks; ``init(polygons:isMulti:)``
/// refuses an edge spanning more than 180 degrees of longitude.
public struct PolygonShape: Hashable, Sendable {
    /// Longitude and latitude of every vertex, interleaved, ring after ring, each ring without the closing
    /// vertex GeoJSON repeats.
    public var vertices: [Double] { storage.vertices }
    /// Where each ring ends, in vertices (exclusive).
    public var ringEnds: [Int32] { storage.ringEnds }
    /// Where each polygon ends, in rings (exclusive).
    ///
    /// A polygon's first ring is its outer boundary, the others its holes.
    public var polygonEnds: [Int32] { storage.polygonEnds }
    /// Whether the command gave a MultiPolygon (written back as one, even with a single polygon).
    public var isMulti: Bool { storage.isMulti }
    /// The smallest longitude/latitude box holding every vertex.
    ///
    /// Kept in the pin itself: it decides most fixes, far from the pin, without following the reference to the
    /// vertices.
    public let bounds: Bounds
    /// A box wholly inside the shape, when one was found: a fix inside it, further than its accuracy from its
    /// sides, is inside without looking at any edge (most fixes of a device parked in a depot).
    var innerBox: Bounds? { storage.innerBox }

    /// The rest behind one reference: a device's pins are read on every fix, and a pin that takes a few
    /// dozen bytes whatever its shape keeps that read to a cache line or two.
    private(set) var storage: Storage

    final class Storage: Sendable {
        let vertices: [Double]
        let ringEnds: [Int32]
        let polygonEnds: [Int32]
        let isMulti: Bool
        let innerBox: Bounds?

        init(vertices: [Double], ringEnds: [Int32], polygonEnds: [Int32], isMulti: Bool, innerBox: Bounds?) {
            self.vertices = vertices
            self.ringEnds = ringEnds
            self.polygonEnds = polygonEnds
            self.isMulti = isMulti
            self.innerBox = innerBox
        }
    }

    public static func == (lhs: PolygonShape, rhs: PolygonShape) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.isMulti == rhs.isMulti && lhs.ringEnds == rhs.ringEnds && lhs.polygonEnds == rhs.polygonEnds
                && lhs.vertices == rhs.vertices)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(vertices)
        hasher.combine(ringEnds)
        hasher.combine(polygonEnds)
        hasher.combine(isMulti)
    }

    /// A longitude/latitude box, in degrees.
    public struct Bounds: Hashable, Sendable {
        public let west: Double
        public let south: Double
        public let east: Double
        public let north: Double
    }

    /// How many vertices the shape has (closing vertices not counted).
    public var vertexCount: Int { vertices.count / 2 }

    /// The shape from GeoJSON coordinates: polygons of rings of `[longitude, latitude]` positions, each ring
    /// closed (its last position equal to its first).
    ///
    /// - Throws: ``PolygonShape/Invalid`` naming the first problem: an empty shape, an unclosed ring, a ring
    ///   of fewer than four positions, a coordinate out of range, or an edge crossing the antimeridian.
    public init(polygons: [[[[Double]]]], isMulti: Bool) throws(Invalid) {
        guard !polygons.isEmpty else { throw Invalid("has no polygon") }
        var vertices: [Double] = []
        var ringEnds: [Int32] = []
        var polygonEnds: [Int32] = []
        for (polygonIndex, rings) in polygons.enumerated() {
            guard !rings.isEmpty else { throw Invalid("polygon \(polygonIndex) has no ring") }
            for (ringIndex, ring) in rings.enumerated() {
                let name = isMulti ? "polygon \(polygonIndex) ring \(ringIndex)" : "ring \(ringIndex)"
                guard ring.count >= 4 else {
                    throw Invalid(
                        "\(name) has \(ring.count) positions; a ring needs at least 4 (the last repeating the first)"
                    )
                }
                for (index, position) in ring.enumerated() {
                    guard position.count >= 2 else { throw Invalid("\(name) position \(index) is not [lon, lat]") }
                    let longitude = position[0]
                    let latitude = position[1]
                    guard longitude.isFinite, latitude.isFinite, (-180.0...180.0).contains(longitude),
                        (-90.0...90.0).contains(latitude)
                    else {
                        throw Invalid("\(name) position \(index) [\(longitude), \(latitude)] is out of range")
                    }
                }
                guard ring[0][0] == ring[ring.count - 1][0], ring[0][1] == ring[ring.count - 1][1] else {
                    throw Invalid("\(name) is not closed: its last position must repeat its first")
                }
                for index in 1..<ring.count where abs(ring[index][0] - ring[index - 1][0]) > 180 {
                    throw Invalid(
                        "\(name) crosses the antimeridian between positions \(index - 1) and \(index): "
                            + "split the shape there (RFC 7946, 3.1.9)"
                    )
                }
                for position in ring.dropLast() {
                    vertices.append(position[0])
                    vertices.append(position[1])
                }
                ringEnds.append(Int32(vertices.count / 2))
            }
            polygonEnds.append(Int32(ringEnds.count))
        }
        guard let shape = Self(vertices: vertices, ringEnds: ringEnds, polygonEnds: polygonEnds, isMulti: isMulti)
        else { throw Invalid("is not a shape geoworker tracks") }  // unreachable: every check above passed
        self = shape
    }

    /// A shape from its stored arrays, checked to be one that ``init(polygons:isMulti:)`` makes; nil otherwise.
    public init?(vertices: [Double], ringEnds: [Int32], polygonEnds: [Int32], isMulti: Bool) {
        guard !polygonEnds.isEmpty, vertices.count % 2 == 0, polygonEnds.last == Int32(ringEnds.count),
            ringEnds.last == Int32(vertices.count / 2)
        else { return nil }
        var previousRing: Int32 = 0
        for end in ringEnds {
            guard end - previousRing >= 3 else { return nil }
            previousRing = end
        }
        var previousPolygon: Int32 = 0
        for end in polygonEnds {
            guard end > previousPolygon else { return nil }
            previousPolygon = end
        }
        var west = Double.infinity
        var south = Double.infinity
        var east = -Double.infinity
        var north = -Double.infinity
        for index in stride(from: 0, to: vertices.count, by: 2) {
            let longitude = vertices[index]
            let latitude = vertices[index + 1]
            guard longitude.isFinite, latitude.isFinite, (-180.0...180.0).contains(longitude),
                (-90.0...90.0).contains(latitude)
            else { return nil }
            west = min(west, longitude)
            east = max(east, longitude)
            south = min(south, latitude)
            north = max(north, latitude)
        }
        self.bounds = Bounds(west: west, south: south, east: east, north: north)
        self.storage = Storage(
            vertices: vertices,
            ringEnds: ringEnds,
            polygonEnds: polygonEnds,
            isMulti: isMulti,
            innerBox: nil
        )
        if let innerBox = findInnerBox() {
            self.storage = Storage(
                vertices: vertices,
                ringEnds: ringEnds,
                polygonEnds: polygonEnds,
                isMulti: isMulti,
                innerBox: innerBox
            )
        }
        // Every ring's edges must stay within half the globe in longitude (checked after the fields are set).
        for ring in 0..<ringEnds.count {
            let range = ringRange(ring)
            var previous = range.upperBound - 1
            for index in range {
                if abs(vertices[2 * index] - vertices[2 * previous]) > 180 { return nil }
                previous = index
            }
        }
    }

    /// Why coordinates are not a shape geoworker tracks.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String

        init(_ description: String) {
            self.description = description
        }
    }

    /// The vertex indices of ring `ring`.
    @inline(__always)
    func ringRange(_ ring: Int) -> Range<Int> {
        (ring == 0 ? 0 : Int(ringEnds[ring - 1]))..<Int(ringEnds[ring])
    }

    /// The ring indices of polygon `polygon`.
    @inline(__always)
    func polygonRange(_ polygon: Int) -> Range<Int> {
        (polygon == 0 ? 0 : Int(polygonEnds[polygon - 1]))..<Int(polygonEnds[polygon])
    }

    /// The GeoJSON coordinates: polygons of closed rings of `[longitude, latitude]`.
    public var coordinates: [[[[Double]]]] {
        (0..<polygonEnds.count).map { polygon in
            polygonRange(polygon).map { ring in
                let range = ringRange(ring)
                var positions = range.map { [vertices[2 * $0], vertices[2 * $0 + 1]] }
                positions.append(positions[0])
                return positions
            }
        }
    }
}

extension PolygonShape {
    /// A box around the first polygon's mean vertex, as large a share of the bounds as fits inside the shape
    /// (its corners inside and no edge meeting it), or nil.
    private func findInnerBox() -> Bounds? {
        let outer = ringRange(0)
        var longitude = 0.0
        var latitude = 0.0
        for index in outer {
            longitude += vertices[2 * index]
            latitude += vertices[2 * index + 1]
        }
        longitude /= Double(outer.count)
        latitude /= Double(outer.count)
        let halfWidth = (bounds.east - bounds.west) / 2
        let halfHeight = (bounds.north - bounds.south) / 2
        for share in [0.7, 0.5, 0.35, 0.25] {
            let box = Bounds(
                west: longitude - halfWidth * share,
                south: latitude - halfHeight * share,
                east: longitude + halfWidth * share,
                north: latitude + halfHeight * share
            )
            if isInside(box) { return box }
        }
        return nil
    }

    private func isInside(_ box: Bounds) -> Bool {
        for (longitude, latitude) in [
            (box.west, box.south), (box.east, box.south), (box.east, box.north), (box.west, box.north),
        ] where !contains(longitude: longitude, latitude: latitude) {
            return false
        }
        for ring in 0..<ringEnds.count {
            let range = ringRange(ring)
            var previous = range.upperBound - 1
            for index in range {
                let start = Coordinate(latitude: vertices[2 * previous + 1], longitude: vertices[2 * previous])!
                let end = Coordinate(latitude: vertices[2 * index + 1], longitude: vertices[2 * index])!
                if box.mayMeetSegment(from: start, to: end) { return false }
                previous = index
            }
        }
        return true
    }
}
