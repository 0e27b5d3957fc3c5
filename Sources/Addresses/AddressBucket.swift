import Foundation
public import GeoCore

/// A square of the Earth about `meters` on a side, the unit the street-address cache and lookups work in: devices
/// whose fixes fall in one bucket share one lookup (the seeds' "location bucket").
///
/// Rows are bands of latitude `meters` tall from the south pole; each band is cut into columns about `meters` wide at
/// its middle latitude, so buckets stay near square away from the equator (a band near a pole has at least one).
/// The size is part of the bucket: a cache keyed by buckets of 100 m finds nothing under buckets of 50 m.
public struct AddressBucket: Hashable, Sendable, CustomStringConvertible {
    public let meters: Int
    public let row: Int
    public let column: Int

    /// The bucket holding `coordinate`, for buckets of `meters` (at least 1).
    public init(_ coordinate: Coordinate, meters: Int) {
        precondition(meters > 0, "a bucket of at least a metre")
        let size = Double(meters)
        let rows = Self.rows(meters: meters)
        let row = min(rows - 1, Int((coordinate.latitude + 90) * LocalPlane.metresPerDegree / size))
        let columns = Self.columns(row: row, meters: meters)
        let column = min(columns - 1, Int((coordinate.longitude + 180) / 360 * Double(columns)))
        self.init(uncheckedMeters: meters, row: row, column: column)
    }

    /// A bucket by its parts, as the cache stores it; nil when they name no bucket of that size.
    public init?(meters: Int, row: Int, column: Int) {
        guard meters > 0, (0..<Self.rows(meters: meters)).contains(row),
            (0..<Self.columns(row: row, meters: meters)).contains(column)
        else { return nil }
        self.init(uncheckedMeters: meters, row: row, column: column)
    }

    private init(uncheckedMeters meters: Int, row: Int, column: Int) {
        self.meters = meters
        self.row = row
        self.column = column
    }

    /// The middle of the bucket: the point a lookup asks the provider about, so that every device in the bucket gets
    /// the same answer whichever of them asked first.
    public var center: Coordinate {
        let latitude = (Double(row) + 0.5) * Double(meters) / LocalPlane.metresPerDegree - 90
        let columns = Self.columns(row: row, meters: meters)
        let longitude = (Double(column) + 0.5) * 360 / Double(columns) - 180
        return Coordinate(latitude: min(90, latitude), longitude: longitude)!
    }

    public var description: String { "\(meters)m:\(row):\(column)" }

    private static func rows(meters: Int) -> Int {
        Int((180 * LocalPlane.metresPerDegree / Double(meters)).rounded(.up))
    }

    /// How many columns a band has: its circumference at its middle latitude over the bucket size.
    private static func columns(row: Int, meters: Int) -> Int {
        let middle = min(90, (Double(row) + 0.5) * Double(meters) / LocalPlane.metresPerDegree - 90)
        let circumference = 360 * LocalPlane.metresPerDegree * cos(middle * .pi / 180)
        return max(1, Int(circumference / Double(meters)))
    }
}
