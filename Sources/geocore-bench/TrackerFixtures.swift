import Foundation
import GeoCore

struct Hemispheres: CountryResolver {
    func countryCode(at coordinate: Coordinate) -> String? { coordinate.longitude < 0 ? "WW" : "EE" }
    func countryCode(at coordinate: Coordinate, within radius: Double) -> String? {
        abs(coordinate.longitude) * 111_000 > radius ? countryCode(at: coordinate) : nil
    }
    func countryName(for code: String) -> String { code }
}

/// Resident bytes after handing freed memory back to the system (glibc's `malloc_trim`, looked up at run
/// time: Swift's Glibc module does not export malloc.h), to see what the pins cost.
func heapBytes() -> Int {
    if let trim = dlsym(nil, "malloc_trim") {
        _ = unsafeBitCast(trim, to: (@convention(c) (Int) -> Int32).self)(0)
    }
    let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? "0 0"
    return (Int(statm.split(separator: " ")[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}
/// A regular polygon of `vertices` vertices through the circle's edge, as a depot would be drawn.
func polygon(around center: Coordinate, radius: Double, vertices: Int) -> PinShape {
    let plane = LocalPlane(at: center)
    var ring = (0..<vertices).map { index -> [Double] in
        let angle = Double(index) / Double(vertices) * 2 * Double.pi
        return [
            center.longitude + radius * sin(angle) / plane.metresPerDegreeEast,
            center.latitude + radius * cos(angle) / LocalPlane.metresPerDegree,
        ]
    }
    ring.append(ring[0])
    return .polygon(try! PolygonShape(polygons: [[ring]], isMulti: false))
}

/// The batch loop as the pipeline runs it: one exclusive access to the registry for the whole batch.
func applyAll(_ positions: [Position], to registry: inout DeviceRegistry, events: inout [DeviceEvent]) {
    for (index, position) in positions.enumerated() {
        let origin = MessageOrigin(
            topic: "positions",
            partition: 0,
            offset: Int64(index),
            timestamp: position.timestamp
        )
        _ = registry.apply(position, origin: origin, events: &events)
    }
}
