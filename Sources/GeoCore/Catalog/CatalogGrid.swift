/// Where the catalog's geofences are, for finding the few near a fix among a million: a grid of longitude/latitude
/// cells at several sizes, each geofence filed once, in the cell of its box's south-west corner at the finest size
/// whose cells are at least as large as its box.
///
/// So a geofence's box spans at most two cells of its own size in each direction, and a box query looks, at each size
/// that holds any geofence, at the cells it covers and one more to the west and the south: every geofence whose box
/// meets the query is found, once, with no set of the ones seen. A 100 m depot sits in a 0.01-degree cell (about a
/// kilometre), a city-wide zone in a coarser one, and a fix looks at a handful of cells of the sizes in use.
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
    }

    private struct Cell: Hashable {
        let x: Int32
        let y: Int32
    }

    /// Per cell size: the geofences filed in each cell, as the caller's numbers with their boxes.
    private var levels: [[Cell: [(number: Int32, box: Box)]]] = Array(repeating: [:], count: cellSizes.count)
    /// How many geofences each size holds: a query skips the sizes that hold none.
    private var counts = Array(repeating: 0, count: cellSizes.count)

    /// How many geofences are filed.
    var count: Int { counts.reduce(0, +) }

    /// Files geofence `number` under `box`.
    mutating func insert(_ number: Int32, box: Box) {
        let (level, cell) = Self.home(of: box)
        levels[level][cell, default: []].append((number, box))
        counts[level] += 1
    }

    /// Takes geofence `number`, filed under `box`, out.
    mutating func remove(_ number: Int32, box: Box) {
        let (level, cell) = Self.home(of: box)
        guard var filed = levels[level][cell], let index = filed.firstIndex(where: { $0.number == number }) else {
            return
        }
        filed.swapAt(index, filed.count - 1)
        filed.removeLast()
        levels[level][cell] = filed.isEmpty ? nil : filed
        counts[level] -= 1
    }

    /// Calls `visit` with each geofence whose box meets `query`, each once.
    func forEach(meeting query: Box, _ visit: (Int32) -> Void) {
        for level in levels.indices where counts[level] > 0 {
            let size = Self.cellSizes[level]
            let (west, south) = (Self.index(query.west, size) - 1, Self.index(query.south, size) - 1)
            let (east, north) = (Self.index(query.east, size), Self.index(query.north, size))
            // A query wider than the cells in use (a map of a whole region) reads those cells instead.
            if Int(east - west + 1) * Int(north - south + 1) > levels[level].count {
                for filed in levels[level].values {
                    for (number, box) in filed where box.meets(query) { visit(number) }
                }
                continue
            }
            for x in west...east {
                for y in south...north {
                    guard let filed = levels[level][Cell(x: x, y: y)] else { continue }
                    for (number, box) in filed where box.meets(query) { visit(number) }
                }
            }
        }
    }

    /// The finest size whose cells hold the box's width and height, and the cell of its south-west corner there.
    private static func home(of box: Box) -> (level: Int, cell: Cell) {
        let extent = max(box.east - box.west, box.north - box.south)
        let level = cellSizes.firstIndex { $0 >= extent } ?? cellSizes.count - 1
        let size = cellSizes[level]
        return (level, Cell(x: index(box.west, size), y: index(box.south, size)))
    }

    private static func index(_ degrees: Double, _ size: Double) -> Int32 {
        Int32((degrees / size).rounded(.down))
    }
}
