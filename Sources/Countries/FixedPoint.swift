/// The index's coordinates: degrees as integers in units of 1e-7 degree (about 1.1 cm), so that every
/// geometric decision is exact integer arithmetic and no rounding can put a point on the wrong side.
enum FixedPoint {
    static let unitsPerDegree: Int64 = 10_000_000
    /// Longitude -180 and latitude -90, the grid's origin.
    static let minimumX: Int64 = -180 * unitsPerDegree
    static let minimumY: Int64 = -90 * unitsPerDegree
    /// Grid cells are 1 degree, split into 16 x 16 subcells where boundaries cross them.
    static let cellSize: Int64 = unitsPerDegree
    static let subcellsPerCell: Int64 = 16
    static let subcellSize: Int64 = cellSize / subcellsPerCell
    static let cellColumns = 360
    static let cellRows = 180

    /// Degrees to units, to the nearest unit (the boundaries were rounded the same way).
    static func units(_ degrees: Double) -> Int64 { Int64((degrees * Double(unitsPerDegree)).rounded()) }
}

/// A boundary vertex in fixed-point units.
struct Vertex: Hashable, Sendable {
    var x: Int32
    var y: Int32
}

/// The two crossing predicates the index is built and queried with.
///
/// Together they reproduce global even-odd ray casting exactly, with a symbolic perturbation that keeps every case in
/// general position: the query point is taken to lie an infinitesimal ε north of where it is, and a reference point of
/// a grid line an infinitesimal ε² east of it. No vertex can then lie on a ray or on a path, so parities add up exactly
/// (Jordan), and points exactly on a boundary get a fixed, deterministic answer.
enum Crossing {
    /// Whether edge `a`-`b` crosses the ray going east from (`x`, `y` + ε) to infinity.
    @inline(__always)
    static func eastRay(_ a: Vertex, _ b: Vertex, x: Int64, y: Int64) -> Bool {
        let ay = Int64(a.y)
        let by = Int64(b.y)
        guard (ay > y) != (by > y) else { return false }
        let ax = Int64(a.x)
        let dx = Int64(b.x) - ax
        let dy = by - ay
        // The edge meets the line y + ε at x' = ax + dx (y - ay) / dy + (dx / dy) ε; counted when x' > x.
        let side = Int128(ax - x) * Int128(dy) + Int128(dx) * Int128(y - ay)
        if side == 0 { return (dx > 0) == (dy > 0) && dx != 0 }  // through (x, y) exactly: the ε term decides
        return (side > 0) == (dy > 0)
    }

    /// Whether edge `a`-`b` crosses the vertical segment from (`x` + ε², `lowY` + ε) to (`x` + ε², `highY` + ε).
    @inline(__always)
    static func northSegment(_ a: Vertex, _ b: Vertex, x: Int64, lowY: Int64, highY: Int64) -> Bool {
        let ax = Int64(a.x)
        let bx = Int64(b.x)
        guard (ax > x) != (bx > x) else { return false }
        // The edge meets x + ε² at y' = ay + dy (x - ax) / dx (+ an ε² term that never outweighs ε).
        let dx = bx - ax
        let numerator = Int128(Int64(a.y)) * Int128(dx) + Int128(Int64(b.y) - Int64(a.y)) * Int128(x - ax)
        let low = Int128(lowY) * Int128(dx)
        let high = Int128(highY) * Int128(dx)
        // lowY < y' <= highY, multiplied through by dx (which flips the comparisons when negative).
        return dx > 0 ? (low < numerator && numerator <= high) : (low > numerator && numerator >= high)
    }
}
