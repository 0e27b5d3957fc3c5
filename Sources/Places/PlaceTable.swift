import GeoCore

/// The populated places, column by column, in the k-d tree's order (a node's number is its place's).
struct PlaceTable: Sendable {
    var geonameIds: [UInt32] = []
    var latitudes: [Int32] = []
    var longitudes: [Int32] = []
    var populations: [UInt32] = []
    var nameEnds: [UInt32] = []
    var names: [UInt8] = []

    var count: Int { geonameIds.count }

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

    var memoryFootprint: Int { count * 20 + names.count }
}
