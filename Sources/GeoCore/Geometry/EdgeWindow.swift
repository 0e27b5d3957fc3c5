/// A longitude/latitude box around a stretch of a ``LocalPlane`` (a point or a segment, widened by a reach in
/// metres): an edge whose own box misses it is further than the reach from that stretch, so the geometry passes it
/// over without projecting it.
///
/// Widened by a centimetre beyond the reach, so that the rounding of the plane's projection never turns an edge
/// passed over into one that would have counted.
struct EdgeWindow {
    let south: Double
    let north: Double
    let west: Double
    let east: Double
    /// False when the box reaches across the antimeridian, where the plane wraps longitudes: every longitude
    /// may then be near.
    let filtersLongitudes: Bool

    /// A window every edge meets.
    static let everywhere = EdgeWindow(
        south: -.infinity,
        north: .infinity,
        west: -180,
        east: 180,
        filtersLongitudes: false
    )

    private init(south: Double, north: Double, west: Double, east: Double, filtersLongitudes: Bool) {
        (self.south, self.north, self.west, self.east, self.filtersLongitudes) = (
            south, north, west, east, filtersLongitudes
        )
    }

    /// The box of the points within `reach` metres of the segment from (x0, y0) to (x1, y1) of `plane`.
    init(around plane: LocalPlane, x x0: Double, y y0: Double, toX x1: Double, y y1: Double, reach: Double) {
        let slack = 1e-7  // degrees: about a centimetre
        let latitudeReach = reach / LocalPlane.metresPerDegree * 1.001 + slack
        south = plane.latitude + min(y0, y1) / LocalPlane.metresPerDegree - latitudeReach
        north = plane.latitude + max(y0, y1) / LocalPlane.metresPerDegree + latitudeReach
        if plane.metresPerDegreeEast > 0 {
            let longitudeReach = reach / plane.metresPerDegreeEast * 1.001 + slack
            west = plane.longitude + min(x0, x1) / plane.metresPerDegreeEast - longitudeReach
            east = plane.longitude + max(x0, x1) / plane.metresPerDegreeEast + longitudeReach
            filtersLongitudes = west > -180 && east < 180
        } else {
            (west, east, filtersLongitudes) = (-180, 180, false)
        }
    }
}
