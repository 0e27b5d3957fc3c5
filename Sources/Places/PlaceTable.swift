import GeoCore

/// The populated places, column by column, in the k-d tree's order (a node's number is its place's).
struct PlaceTable: Sendable {
    var geonameIds: [UInt32] = []
    var latitudes: [Int32] = []
    var longitudes: [Int32] = []
    var populations: [UInt32] = []
    /// Each place's town, by place number: the place itself for a town, the town it belongs to for a quarter.
    var towns: [UInt32] = []
    /// Each place's neighbour town (``PlaceTable/noPlace`` for none): the town whose reach comes nearest to covering
    /// it, which a point nearer the place may still be in (a point in Reykjavík nearer Seltjarnarnes' centre).
    var neighbours: [UInt32] = []
    var nameEnds: [UInt32] = []
    var names: [UInt8] = []

    var count: Int { geonameIds.count }

    static let noPlace = UInt32.max

    /// The place's coordinate: in range, as the reader checked every one.
    func coordinate(of place: Int) -> Coordinate {
        Coordinate(
            latitude: Double(latitudes[place]) / PlaceIndexFormat.degreeUnits,
            longitude: Double(longitudes[place]) / PlaceIndexFormat.degreeUnits
        )!
    }

    func name(of place: Int) -> String {
        let start = place == 0 ? 0 : Int(nameEnds[place - 1])
        return String(decoding: names[start..<Int(nameEnds[place])], as: UTF8.self)
    }

    /// How far from its point a town is taken to reach, in metres.
    ///
    /// 10 m times the square root of its population (Berlin 18.5 km, Geneva 4.3 km, a town of 20,000 1.4 km), at most
    /// 30 km. `tools/places/localities.py` decides towns and quarters by the same reach.
    func reach(of place: Int) -> Double {
        min(30_000, 10 * Double(populations[place]).squareRoot())
    }

    var memoryFootprint: Int { count * 28 + names.count }
}
