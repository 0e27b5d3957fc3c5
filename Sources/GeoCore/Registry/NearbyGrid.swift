/// Where a set of things last were, bucketed in a grid of cells `cellDegrees` on a side, so that those near a point
/// or inside a box are found by visiting a few cells instead of every one of them: the index behind a nearby query
/// ("which of my vehicles are nearest this pick-up") and a map's box.
///
/// Things are numbered densely from 0 (a registry's slots), so that where each is lives in arrays: placing a thing
/// again within its cell, which is most of a moving fleet's fixes, is two array writes and no hashing. Each thing is
/// in one cell at a time: placing it again moves it. Cells are rows of latitude and columns of
/// longitude from the south-west corner; a query's columns wrap across the antimeridian, and near a pole, where a
/// degree of longitude is short, a query takes whole rows. Distances are great-circle (``Coordinate/distance(to:)``).
///
/// Pure and single-threaded: one per shard of devices, changed and asked on the thread that owns the shard.
public struct NearbyGrid: Sendable {
    public typealias ID = Int

    /// The side of a cell in degrees.
    public let cellDegrees: Double
    private let rows: Int
    private let columns: Int
    /// The things in each non-empty cell, by cell number.
    private var cells: [Int: [Int32]] = [:]
    /// Each thing's cell (-1: not in the grid) and its place in that cell's array, by thing number.
    private var cellOf: [Int32] = []
    private var slotInCell: [Int32] = []
    /// Each thing's coordinate, by thing number (meaningful where `cellOf` is not -1).
    private var coordinates: [Coordinate] = []
    public private(set) var count = 0

    /// An empty grid of cells `cellDegrees` on a side (at most 10 degrees; 0.05, about 5.5 km of latitude, by default).
    public init(cellDegrees: Double = 0.05) {
        precondition(cellDegrees > 0 && cellDegrees <= 10, "a cell is more than nothing and at most 10 degrees")
        self.cellDegrees = cellDegrees
        rows = Int((180 / cellDegrees).rounded(.up))
        columns = Int((360 / cellDegrees).rounded(.up))
    }

    /// Where `id` is, if the grid holds it.
    public func coordinate(of id: ID) -> Coordinate? {
        id >= 0 && id < cellOf.count && cellOf[id] >= 0 ? coordinates[id] : nil
    }

    /// Puts `id` (0 or more) at `coordinate`, moving it from where it was.
    public mutating func place(_ id: ID, at coordinate: Coordinate) {
        precondition(id >= 0, "things are numbered from 0")
        if id >= cellOf.count {
            let added = id + 1 - cellOf.count
            cellOf.append(contentsOf: repeatElement(-1, count: added))
            slotInCell.append(contentsOf: repeatElement(0, count: added))
            coordinates.append(contentsOf: repeatElement(coordinate, count: added))
        }
        coordinates[id] = coordinate
        let cell = Int32(cellNumber(row: row(of: coordinate.latitude), column: column(of: coordinate.longitude)))
        let current = cellOf[id]
        guard current != cell else { return }
        if current >= 0 {
            takeOut(id, from: Int(current), slot: Int(slotInCell[id]))
        } else {
            count += 1
        }
        slotInCell[id] = Int32(cells[Int(cell), default: []].count)
        cells[Int(cell), default: []].append(Int32(id))
        cellOf[id] = cell
    }

    /// Forgets `id`.
    public mutating func remove(_ id: ID) {
        guard id >= 0, id < cellOf.count, cellOf[id] >= 0 else { return }
        takeOut(id, from: Int(cellOf[id]), slot: Int(slotInCell[id]))
        cellOf[id] = -1
        count -= 1
    }

    /// The things within `radius` metres of `center`, nearest first (ties by nothing in particular), at most `limit`.
    public func nearest(to center: Coordinate, within radius: Double, limit: Int) -> [(id: ID, distance: Double)] {
        guard limit > 0, radius >= 0 else { return [] }
        var found: [(id: ID, distance: Double)] = []
        let latitudeSpan = radius / LocalPlane.metresPerDegree
        let southRow = row(of: max(-90, center.latitude - latitudeSpan))
        let northRow = row(of: min(90, center.latitude + latitudeSpan))
        for row in southRow...northRow {
            // The band's latitude nearest a pole has the shortest degree of longitude: the widest span of columns.
            let bandLatitude = min(
                90,
                max(abs(Double(row) * cellDegrees - 90), abs(Double(row + 1) * cellDegrees - 90))
            )
            let metresPerLongitudeDegree = LocalPlane.metresPerDegree * _cos(bandLatitude * .pi / 180)
            let longitudeSpan = metresPerLongitudeDegree > 0 ? radius / metresPerLongitudeDegree : 360
            for column in columnsAround(center.longitude, span: longitudeSpan) {
                guard let ids = cells[cellNumber(row: row, column: column)] else { continue }
                for id in ids {
                    let distance = center.distance(to: coordinates[Int(id)])
                    if distance <= radius { found.append((Int(id), distance)) }
                }
            }
        }
        found.sort { $0.distance < $1.distance }
        return Array(found.prefix(limit))
    }

    /// The things inside a box from `south` to `north` and from `west` eastwards to `east` (a `west` greater than
    /// `east` spans the antimeridian), edges included.
    public func inside(south: Double, west: Double, north: Double, east: Double) -> [ID] {
        guard south <= north else { return [] }
        var found: [ID] = []
        let crossesAntimeridian = west > east
        let span = crossesAntimeridian ? 360 - west + east : east - west
        let firstColumn = column(of: west)
        let columnCount = min(columns, Int((span / cellDegrees).rounded(.up)) + 2)
        for row in row(of: south)...row(of: north) {
            for step in 0..<columnCount {
                guard let ids = cells[cellNumber(row: row, column: (firstColumn + step) % columns)] else { continue }
                for id in ids {
                    let coordinate = coordinates[Int(id)]
                    let inLongitude =
                        crossesAntimeridian
                        ? coordinate.longitude >= west || coordinate.longitude <= east
                        : coordinate.longitude >= west && coordinate.longitude <= east
                    if inLongitude && coordinate.latitude >= south && coordinate.latitude <= north {
                        found.append(Int(id))
                    }
                }
            }
        }
        return found
    }

    private func row(of latitude: Double) -> Int { min(rows - 1, max(0, Int((latitude + 90) / cellDegrees))) }

    private func column(of longitude: Double) -> Int {
        let column = Int(((longitude + 180) / cellDegrees).rounded(.down))
        return ((column % columns) + columns) % columns
    }

    private func cellNumber(row: Int, column: Int) -> Int { row * columns + column }

    /// The columns within `span` degrees of `longitude` either way, each once, wrapping across the antimeridian.
    private func columnsAround(_ longitude: Double, span: Double) -> [Int] {
        guard span < 180 else { return Array(0..<columns) }
        let first = column(of: longitude - span)
        let count = min(columns, Int((2 * span / cellDegrees).rounded(.up)) + 2)
        return (0..<count).map { (first + $0) % columns }
    }

    /// Takes `id` out of its cell's array by moving the cell's last thing into its slot.
    private mutating func takeOut(_ id: ID, from cell: Int, slot: Int) {
        // Through the dictionary's subscript, in place: a copy of the array would cost its whole length.
        guard let last = cells[cell]?.removeLast() else { return }
        if slot < cells[cell]!.count {
            cells[cell]![slot] = last
            slotInCell[Int(last)] = Int32(slot)
        }
        // An emptied cell keeps its array: a fleet moves back and forth between the same cells, and dropping and
        // making arrays again was most of a move's cost.
    }
}
