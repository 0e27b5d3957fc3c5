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
    /// Where each polygon ends, in rings (exclusive). A polygon's first ring is its outer boundary, the
    /// others its holes.
    public var polygonEnds: [Int32] { storage.polygonEnds }
    /// Whether the command gave a MultiPolygon (written back as one, even with a single polygon).
    public var isMulti: Bool { storage.isMulti }
    /// The smallest longitude/latitude box holding every vertex. Kept in the pin itself: it decides most
    /// fixes, far from the pin, without following the reference to the vertices.
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
    /// Whether the point lies inside the shape (inside an outer ring and in none of its holes), in the
    /// longitude/latitude plane. Points exactly on an edge may go either way: the geofence rules never decide
    /// within the fix's accuracy of an edge.
    public func contains(longitude: Double, latitude: Double) -> Bool {
        guard latitude >= bounds.south && latitude <= bounds.north else { return false }
        return storage.vertices.withUnsafeBufferPointer { vertices in
            for polygon in 0..<polygonEnds.count {
                // Crossing-number test over the polygon's rings: a ray going east from the point crosses its
                // boundary (outer ring and holes) an odd number of times when the point is inside.
                var inside = false
                for ring in polygonRange(polygon) {
                    let range = ringRange(ring)
                    var previous = range.upperBound - 1
                    for index in range {
                        let y1 = vertices[2 * index + 1]
                        let y0 = vertices[2 * previous + 1]
                        if (y1 > latitude) != (y0 > latitude) {
                            let x1 = vertices[2 * index]
                            let x0 = vertices[2 * previous]
                            if longitude < x1 + (latitude - y1) / (y0 - y1) * (x0 - x1) { inside.toggle() }
                        }
                        previous = index
                    }
                }
                if inside { return true }
            }
            return false
        }
    }

    /// Whether some edge lies within `margin` metres of the point (closer than it, or also exactly at it when
    /// `inclusive`), as ``nearestEdge(to:)`` measures. Faster than measuring: edges whose longitudes or
    /// latitudes keep them further than `margin` away are passed over by comparing degrees.
    func hasEdge(within margin: Double, inclusive: Bool, of plane: LocalPlane) -> Bool {
        let latitudeReach = margin / LocalPlane.metresPerDegree * 1.001
        let longitudeReach = plane.metresPerDegreeEast > 0 ? margin / plane.metresPerDegreeEast * 1.001 : 360
        // Near the antimeridian the plane wraps longitudes: compare them there the slow way.
        let filterLongitudes = abs(plane.longitude) + longitudeReach < 180
        let low = plane.latitude - latitudeReach
        let high = plane.latitude + latitudeReach
        guard high >= bounds.south && low <= bounds.north else { return false }
        return storage.vertices.withUnsafeBufferPointer { vertices in
            for ring in 0..<ringEnds.count {
                let range = ringRange(ring)
                var previous = range.upperBound - 1
                for index in range {
                    defer { previous = index }
                    let y0 = vertices[2 * previous + 1]
                    let y1 = vertices[2 * index + 1]
                    if min(y0, y1) > high || max(y0, y1) < low { continue }
                    let x0 = vertices[2 * previous]
                    let x1 = vertices[2 * index]
                    if filterLongitudes
                        && (min(x0, x1) - longitudeReach > plane.longitude
                            || max(x0, x1) + longitudeReach < plane.longitude)
                    {
                        continue
                    }
                    let edge = PlaneSegment(
                        ax: plane.x(longitude: x0),
                        ay: plane.y(latitude: y0),
                        bx: plane.x(longitude: x1),
                        by: plane.y(latitude: y1)
                    )
                    let distance = edge.distanceFromOrigin()
                    if distance < margin || (inclusive && distance == margin) { return true }
                }
            }
            return false
        }
    }

    /// The distance in metres from the point to the nearest edge (outer or hole), in the plane tangent at
    /// the point, and that nearest point of the edge in the same plane.
    public func nearestEdge(to plane: LocalPlane) -> (distance: Double, x: Double, y: Double) {
        // Within reach of the antimeridian the plane wraps longitudes: no pruning by them there.
        let wrapsNear = bounds.west - plane.longitude < -180 || bounds.east - plane.longitude > 180
        return storage.vertices.withUnsafeBufferPointer { vertices in
            var best = Double.infinity
            var bestX = 0.0
            var bestY = 0.0
            for ring in 0..<ringEnds.count {
                let range = ringRange(ring)
                var previous = range.upperBound - 1
                for index in range {
                    defer { previous = index }
                    let y0 = vertices[2 * previous + 1]
                    let y1 = vertices[2 * index + 1]
                    // An edge whose latitudes and longitudes keep it further than the nearest so far is passed
                    // over (its box's distance, a lower bound of its own).
                    let x0 = vertices[2 * previous]
                    let x1 = vertices[2 * index]
                    let latitudeGap = max(0, min(y0, y1) - plane.latitude, plane.latitude - max(y0, y1))
                    let northGap = latitudeGap * LocalPlane.metresPerDegree
                    let longitudeGap =
                        wrapsNear ? 0 : max(0, min(x0, x1) - plane.longitude, plane.longitude - max(x0, x1))
                    let eastGap = longitudeGap * plane.metresPerDegreeEast
                    if northGap * northGap + eastGap * eastGap >= best { continue }
                    let ax = plane.x(longitude: x0)
                    let ay = plane.y(latitude: y0)
                    let bx = plane.x(longitude: x1)
                    let by = plane.y(latitude: y1)
                    // The nearest point of segment a-b to the origin (the point itself).
                    let dx = bx - ax
                    let dy = by - ay
                    let lengthSquared = dx * dx + dy * dy
                    var t = lengthSquared > 0 ? -(ax * dx + ay * dy) / lengthSquared : 0
                    t = min(1, max(0, t))
                    let px = ax + t * dx
                    let py = ay + t * dy
                    let distanceSquared = px * px + py * py
                    if distanceSquared < best {
                        best = distanceSquared
                        bestX = px
                        bestY = py
                    }
                }
            }
            return (best.squareRoot(), bestX, bestY)
        }
    }

    /// A lower bound of the distance in metres from the point to the shape: its distance to ``bounds``.
    /// Cheap, so that pins far from a fix cost no more than a circle's.
    func distanceToBounds(from plane: LocalPlane) -> Double {
        let latitudeGap = max(0, bounds.south - plane.latitude, plane.latitude - bounds.north)
        var longitudeGap = 0.0
        if plane.longitude < bounds.west || plane.longitude > bounds.east {
            // The way round the globe that is shorter, as the plane measures it.
            longitudeGap = min(
                LocalPlane.wrapped(bounds.west - plane.longitude).magnitude,
                LocalPlane.wrapped(plane.longitude - bounds.east).magnitude
            )
        }
        return max(latitudeGap * LocalPlane.metresPerDegree, longitudeGap * plane.metresPerDegreeEast)
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

extension PolygonShape.Bounds {
    /// Whether the point lies inside the box by more than `margin` metres on every side, measured in `plane`
    /// (the plane tangent at the point).
    func contains(_ plane: LocalPlane, by margin: Double) -> Bool {
        let latitudeMargin = margin / LocalPlane.metresPerDegree
        guard plane.latitude - latitudeMargin > south && plane.latitude + latitudeMargin < north else { return false }
        guard plane.metresPerDegreeEast > 0 else { return false }
        let longitudeMargin = margin / plane.metresPerDegreeEast
        return plane.longitude - longitudeMargin > west && plane.longitude + longitudeMargin < east
    }
}
