import GeoCore

/// Where a point falls along a Z-order curve over latitude and longitude: points near each other along the curve are
/// near each other on the map.
///
/// A file of points in no particular order looks each one up in a different part of the indexes, and each lookup
/// fetches its polygons, trees and places from memory anew. Looked up along the curve, a block of points mostly finds
/// what it needs where the point before it left it, in the cache.
enum SpatialOrder {
    /// The point's position on the curve: its latitude and longitude in 16 bits each, their bits interleaved.
    static func key(of point: Coordinate) -> UInt32 {
        let latitude = UInt32(((point.latitude + 90) / 180 * 65_535).rounded(.down))
        let longitude = UInt32(((point.longitude + 180) / 360 * 65_535).rounded(.down))
        return spread(latitude) | spread(longitude) << 1
    }

    /// The bits of a key that a sort along the curve looks at: cells of 2.8 by 1.4 degrees (16,384 in all).
    ///
    /// A block's stretch holds some 25,000 points: about one and a half a cell over the globe, so the order inside a
    /// cell matters little, and a counting sort over the cells takes two passes where a comparison sort took a
    /// twentieth of the command.
    private static let sortedBits = 14

    /// `items` in the order of their keys' cells along the curve (in their own order within a cell), into `sorted`.
    static func sort<Item>(_ items: [Item], into sorted: inout [Item], by key: (Item) -> UInt32) {
        let shift = UInt32(32 - sortedBits)
        var starts = [Int](repeating: 0, count: (1 << sortedBits) + 1)
        for item in items { starts[Int(key(item) >> shift) + 1] += 1 }
        for cell in 0..<(1 << sortedBits) { starts[cell + 1] += starts[cell] }
        sorted.removeAll(keepingCapacity: true)
        guard let first = items.first else { return }
        sorted.append(contentsOf: repeatElement(first, count: items.count))
        for item in items {
            let cell = Int(key(item) >> shift)
            sorted[starts[cell]] = item
            starts[cell] += 1
        }
    }

    /// The low 16 bits of `value` moved to the even bits.
    private static func spread(_ value: UInt32) -> UInt32 {
        var bits = value & 0xFFFF
        bits = (bits | bits << 8) & 0x00FF_00FF
        bits = (bits | bits << 4) & 0x0F0F_0F0F
        bits = (bits | bits << 2) & 0x3333_3333
        bits = (bits | bits << 1) & 0x5555_5555
        return bits
    }
}
