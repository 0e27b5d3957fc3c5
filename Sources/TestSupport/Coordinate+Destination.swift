import Foundation
public import GeoCore

/// The point `distance` metres from `start` at compass bearing `bearing` degrees, on the distance sphere
/// (``Coordinate/earthRadius``): fixes placed at a known distance from a pin or a lookup, for property tests.
public func destination(from start: Coordinate, distance: Double, bearing: Double) -> Coordinate {
    let angle = distance / Coordinate.earthRadius
    let phi = start.latitude * .pi / 180
    let theta = bearing * .pi / 180
    let latitude = asin(sin(phi) * cos(angle) + cos(phi) * sin(angle) * cos(theta))
    var longitude =
        start.longitude * .pi / 180
        + atan2(sin(theta) * sin(angle) * cos(phi), cos(angle) - sin(phi) * sin(latitude))
    if longitude > .pi { longitude -= 2 * .pi }
    if longitude < -.pi { longitude += 2 * .pi }
    return Coordinate(latitude: min(90, max(-90, latitude * 180 / .pi)), longitude: longitude * 180 / .pi)!
}
