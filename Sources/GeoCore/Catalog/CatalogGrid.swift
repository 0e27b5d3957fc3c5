/// Where the catalog's geofences are, for finding the few near a fix among a million: a grid of longitude/latitude
/// cells at several sizes, each geofence filed at the finest size whose cells are at least as large as its box, in
/// each cell its box meets there (at most two by two).
///
/// A box query looks, at each size that holds any geofence, at the cells it covers (a fix's box: one or two), and
/// reports a geofence from one of them only, the cell holding the south-west corner of where its box and the query's
/// meet: every geofence whose box meets the query is found, once, with no set of the ones seen. A 100 m depot sits in
/// a 0.01-degree cell (about a kilometre), a city-wide zone in a coarser one.
///
/// Pure and a value: the catalog replaces it as a whole or changes it between the apply threads' rounds.
struct CatalogGrid: Sendable {
    /// The cell sizes, in degrees: 0.01 times powers of 4, up to one larger than the whole world.
    static let cellSizes: [Double] = (0..<9).map { 0.01 * Double(1 << (2 * $0)) }

    /// A box in degrees, west to east and south to north (never across the antimeridian).
    struct Box: Hashable, Sendable {
        var west: Double
        var south: Double
        var east: Double
        var north: Double

        func meets(_ other: Box) -> Bool {
            west <= other.east && other.west <= east && south <= other.north && other.south <= north
        }

        /// A query box brought into -180...180: the part from its west, and what lies past 180 as a box from -180 on.
        static func sides(
            of box: (west: Double, south: Double, east: Double, north: Double)
        ) -> (main: Box, wrapped: Box?) {
            let south = max(-90, box.south)
            let north = min(90, box.north)
            var west = box.west
            var east = box.east
            if east - west >= 360 {
                (west, east) = (-180, 180)
            } else {
                let turns = ((west + 180) / 360).rounded(.down) * 360
                (west, east) = (west - turns, east - turns)
            }
            let main = Box(west: west, south: south, east: min(180, east), north: north)
            let wrapped = east > 180 ? Box(west: -180, south: south, east: east - 360, north: north) : nil
            return (main, wrapped)
        }
    }

    /// The geofences filed in each cell of every size, as the caller's numbers with their boxes, by ``key(_:_:_:)``.
    private var cells: [UInt64: [(number: Int32, box: Box)]] = [:]
    /// How many geofences each size holds: a query skips the sizes that hold none.
    private var counts = Array(repeating: 0, count: cellSizes.count)

    /// How many geofences are filed.
    var count: Int { counts.reduce(0, +) }

    /// Files geofence `number` under `box`.
    mutating func insert(_ number: Int32, box: Box) {
        let level = Self.level(of: box)
        forEachCell(of: box, at: level) { key in cells[key, default: []].append((number, box)) }
        counts[level] += 1
    }

    /// Takes geofence `number`, filed under `box`, out.
    mutating func remove(_ number: Int32, box: Box) {
        let level = Self.level(of: box)
        var found = false
        forEachCell(of: box, at: level) { key in
            guard var filed = cells[key], let index = filed.firstIndex(where: { $0.number == number }) else { return }
            found = true
            filed.swapAt(index, filed.count - 1)
            filed.removeLast()
            cells[key] = filed.isEmpty ? nil : filed
        }
        if found { counts[level] -= 1 }
    }

    /// Calls `visit` with each geofence whose box meets `query`, each once.
    func forEach(meeting query: Box, _ visit: (Int32) -> Void) {
        // A level whose cells under the query outnumber the grid's filed cells is read from those instead: a map
        // of the world would otherwise look up hundreds of millions of empty cells of 0.01 degree.
        var readFiled = Array(repeating: false, count: counts.count)
        for level in counts.indices where counts[level] > 0 {
            let size = Self.cellSizes[level]
            let (west, south) = (Self.index(query.west, size), Self.index(query.south, size))
            let (east, north) = (Self.index(query.east, size), Self.index(query.north, size))
            if Double(east - west + 1) * Double(north - south + 1) > Double(cells.count) {
                readFiled[level] = true
                continue
            }
            for x in west...east {
                for y in south...north {
                    guard let filed = cells[Self.key(level, x, y)] else { continue }
                    Self.report(filed, meeting: query, fromCell: x, y, size: size, visit)
                }
            }
        }
        guard readFiled.contains(true) else { return }
        for (key, filed) in cells {
            let level = Int(key >> 48)
            guard readFiled[level] else { continue }
            let (x, y) = Self.cell(of: key)
            Self.report(filed, meeting: query, fromCell: x, y, size: Self.cellSizes[level], visit)
        }
    }

    /// Visits the geofences filed in cell (`x`, `y`) that meet `query`, each from the cell of the meeting's south-west
    /// corner only (a geofence is filed in every cell its box meets).
    private static func report(
        _ filed: [(number: Int32, box: Box)],
        meeting query: Box,
        fromCell x: Int32,
        _ y: Int32,
        size: Double,
        _ visit: (Int32) -> Void
    ) {
        for (number, box) in filed where box.meets(query) {
            guard index(max(box.west, query.west), size) == x, index(max(box.south, query.south), size) == y
            else { continue }
            visit(number)
        }
    }

    private func forEachCell(of box: Box, at level: Int, _ body: (UInt64) -> Void) {
        let size = Self.cellSizes[level]
        for x in Self.index(box.west, size)...Self.index(box.east, size) {
            for y in Self.index(box.south, size)...Self.index(box.north, size) { body(Self.key(level, x, y)) }
        }
    }

    /// The finest size whose cells hold the box's width and height.
    private static func level(of box: Box) -> Int {
        let extent = max(box.east - box.west, box.north - box.south)
        return cellSizes.firstIndex { $0 >= extent } ?? cellSizes.count - 1
    }

    private static func index(_ degrees: Double, _ size: Double) -> Int32 {
        Int32((degrees / size).rounded(.down))
    }

    /// One key for a cell of any size: the size's number and the cell's two indexes (each within 24 bits: 36,000
    /// cells of the finest size span the longitudes).
    private static func key(_ level: Int, _ x: Int32, _ y: Int32) -> UInt64 {
        UInt64(level) << 48 | UInt64(UInt32(bitPattern: x) & 0xFF_FFFF) << 24
            | UInt64(UInt32(bitPattern: y) & 0xFF_FFFF)
    }

    /// The cell indexes a key holds (24 bits each, signed).
    private static func cell(of key: UInt64) -> (x: Int32, y: Int32) {
        func signed(_ bits: UInt64) -> Int32 { Int32(bitPattern: UInt32(bits & 0xFF_FFFF) << 8) >> 8 }
        return (signed(key >> 24), signed(key))
    }
}
