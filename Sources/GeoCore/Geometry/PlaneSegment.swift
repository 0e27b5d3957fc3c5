/// A segment in a ``LocalPlane``.
struct PlaneSegment {
    let ax: Double
    let ay: Double
    let bx: Double
    let by: Double

    /// The distance from the plane's origin to the nearest point of the segment.
    func distanceFromOrigin() -> Double {
        let dx = bx - ax
        let dy = by - ay
        let lengthSquared = dx * dx + dy * dy
        let t = lengthSquared > 0 ? min(1, max(0, -(ax * dx + ay * dy) / lengthSquared)) : 0
        let px = ax + t * dx
        let py = ay + t * dy
        return (px * px + py * py).squareRoot()
    }
}
