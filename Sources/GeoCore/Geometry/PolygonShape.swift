/// A polygon geofence: a GeoJSON (RFC 7946) Polygon or MultiPolygon, holes included.
///
/// As RFC 7946 says, edges are straight lines in longitude and latitude, so *inside* is decided in that
/// plane (the same answer as shapely or PostGIS geometry); distances to the edge are measured in metres in
/// a plane tangent at the point (``LocalPlane``), which maps those straight edges to straight edges.
/// Shapes that cross the antimeridian must be split there, as the RFC asks; ``init(polygons:isMulti:)``
/// refuses an edge spanning more than 180 degrees of longitude.
public struct PolygonShape: Hashable, Sendable {
    /// How finely vertices are kept: in units of 1e-7 degree (about a centimetre).
    ///
    /// As OpenStreetMap keeps its coordinates: half the bytes of doubles, which matters when a fleet's catalog holds a
    /// million shapes, and far finer than any fix's accuracy.
    public static let unitsPerDegree = 1e7

    /// Longitude and latitude of every vertex, interleaved, ring after ring, each ring without the closing
    /// vertex GeoJSON repeats (each rounded to 1e-7 degree, ``unitsPerDegree``).
    public var vertices: [Double] { storage.units.map(Self.degrees) }
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
        /// ``vertices`` in units of ``unitsPerDegree``.
        let units: [Int32]
        let ringEnds: [Int32]
        let polygonEnds: [Int32]
        let isMulti: Bool
        let innerBox: Bounds?

        init(units: [Int32], ringEnds: [Int32], polygonEnds: [Int32], isMulti: Bool, innerBox: Bounds?) {
            self.units = units
            self.ringEnds = ringEnds
            self.polygonEnds = polygonEnds
            self.isMulti = isMulti
            self.innerBox = innerBox
        }
    }

    public static func == (lhs: PolygonShape, rhs: PolygonShape) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.isMulti == rhs.isMulti && lhs.ringEnds == rhs.ringEnds && lhs.polygonEnds == rhs.polygonEnds
                && lhs.storage.units == rhs.storage.units)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.units)
        hasher.combine(ringEnds)
        hasher.combine(polygonEnds)
        hasher.combine(isMulti)
    }

    /// Degrees from units of ``unitsPerDegree``: the double nearest the decimal they stand for, as it was written.
    @inline(__always)
    static func degrees(_ units: Int32) -> Double { Double(units) / unitsPerDegree }

    /// Vertex `index`'s longitude and latitude, in degrees.
    @inline(__always)
    public func vertex(_ index: Int) -> (longitude: Double, latitude: Double) {
        (Self.degrees(storage.units[2 * index]), Self.degrees(storage.units[2 * index + 1]))
    }

    /// A longitude/latitude box, in degrees.
    public struct Bounds: Hashable, Sendable {
        public let west: Double
        public let south: Double
        public let east: Double
        public let north: Double
    }

    /// How many vertices the shape has (closing vertices not counted).
    public var vertexCount: Int { storage.units.count / 2 }

    /// The shape from GeoJSON coordinates: polygons of rings of `[longitude, latitude]` positions, each ring
    /// closed (its last position equal to its first).
    ///
    /// - Throws: ``PolygonShape/Invalid`` naming the first problem: an empty shape, an unclosed ring, a ring
    ///   of fewer than four positions, a coordinate out of range, or an edge crossing the antimeridian.
    public init(polygons: [[[[Double]]]], isMulti: Bool) throws(Invalid) {
        var positions: [[[GeoJSONPosition]]] = []
        for (polygonIndex, rings) in polygons.enumerated() {
            var polygon: [[GeoJSONPosition]] = []
            for (ringIndex, ring) in rings.enumerated() {
                let name = isMulti ? "polygon \(polygonIndex) ring \(ringIndex)" : "ring \(ringIndex)"
                polygon.append(
                    try ring.enumerated().map { (index, position) throws(Invalid) in
                        guard position.count >= 2 else { throw Invalid("\(name) position \(index) is not [lon, lat]") }
                        return GeoJSONPosition(longitude: position[0], latitude: position[1])
                    }
                )
            }
            positions.append(polygon)
        }
        try self.init(positions: positions, isMulti: isMulti)
    }

    /// The shape from GeoJSON positions: polygons of closed rings; see ``init(polygons:isMulti:)``.
    public init(positions polygons: [[[GeoJSONPosition]]], isMulti: Bool) throws(Invalid) {
        guard !polygons.isEmpty else { throw Invalid("has no polygon") }
        // Each array made to its size at once: grown by appending, a shape would keep up to twice its vertices'
        // bytes, and a catalog keeps a million shapes.
        var vertices: [Double] = []
        vertices.reserveCapacity(polygons.reduce(0) { $0 + $1.reduce(0) { $0 + 2 * max(0, $1.count - 1) } })
        var ringEnds: [Int32] = []
        ringEnds.reserveCapacity(polygons.reduce(0) { $0 + $1.count })
        var polygonEnds: [Int32] = []
        polygonEnds.reserveCapacity(polygons.count)
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
                    let (longitude, latitude) = (position.longitude, position.latitude)
                    guard longitude.isFinite, latitude.isFinite, (-180.0...180.0).contains(longitude),
                        (-90.0...90.0).contains(latitude)
                    else {
                        throw Invalid("\(name) position \(index) [\(longitude), \(latitude)] is out of range")
                    }
                }
                guard ring[0] == ring[ring.count - 1] else {
                    throw Invalid("\(name) is not closed: its last position must repeat its first")
                }
                for index in 1..<ring.count where abs(ring[index].longitude - ring[index - 1].longitude) > 180 {
                    throw Invalid(
                        "\(name) crosses the antimeridian between positions \(index - 1) and \(index): "
                            + "split the shape there (RFC 7946, 3.1.9)"
                    )
                }
                for position in ring.dropLast() {
                    vertices.append(position.longitude)
                    vertices.append(position.latitude)
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
        var units: [Int32] = []
        units.reserveCapacity(vertices.count)
        for index in stride(from: 0, to: vertices.count, by: 2) {
            let longitude = vertices[index]
            let latitude = vertices[index + 1]
            guard longitude.isFinite, latitude.isFinite, (-180.0...180.0).contains(longitude),
                (-90.0...90.0).contains(latitude)
            else { return nil }
            units.append(Int32((longitude * Self.unitsPerDegree).rounded()))
            units.append(Int32((latitude * Self.unitsPerDegree).rounded()))
        }
        var west = Int32.max
        var south = Int32.max
        var east = Int32.min
        var north = Int32.min
        for index in stride(from: 0, to: units.count, by: 2) {
            west = min(west, units[index])
            east = max(east, units[index])
            south = min(south, units[index + 1])
            north = max(north, units[index + 1])
        }
        self.bounds = Bounds(
            west: Self.degrees(west),
            south: Self.degrees(south),
            east: Self.degrees(east),
            north: Self.degrees(north)
        )
        self.storage = Storage(
            units: units,
            ringEnds: ringEnds,
            polygonEnds: polygonEnds,
            isMulti: isMulti,
            innerBox: nil
        )
        if let innerBox = findInnerBox() {
            self.storage = Storage(
                units: units,
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
                if abs(vertex(index).longitude - vertex(previous).longitude) > 180 { return nil }
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
                var positions = range.map { [vertex($0).longitude, vertex($0).latitude] }
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
            longitude += vertex(index).longitude
            latitude += vertex(index).latitude
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
                let start = Coordinate(latitude: vertex(previous).latitude, longitude: vertex(previous).longitude)!
                let end = Coordinate(latitude: vertex(index).latitude, longitude: vertex(index).longitude)!
                if box.mayMeetSegment(from: start, to: end) { return false }
                previous = index
            }
        }
        return true
    }
}

/// A GeoJSON position's longitude and latitude, in degrees (an altitude is not kept).
public struct GeoJSONPosition: Hashable, Sendable {
    public let longitude: Double
    public let latitude: Double

    public init(longitude: Double, latitude: Double) {
        self.longitude = longitude
        self.latitude = latitude
    }
}
