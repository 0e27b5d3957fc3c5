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
