/// How a device moves at a fix, as far as its messages tell: a speed and a direction, each reported by the
/// device or derived from its last two fixes.
struct FixMotion {
    /// Metres per second; nil when neither reported nor derivable.
    var speed: Double?
    var speedBasis: GeofenceApproach.Basis = .reportedSpeed
    /// Degrees clockwise from north; nil when neither reported nor derivable.
    var heading: Double?
    /// Whether, with no speed reported, the fix lies within both accuracies of a recent previous fix: the device
    /// stands (or creeps), its speed is next to nothing, though no speed or direction can be derived.
    var isStanding = false

    init() {}

    /// The motion at `position`.
    ///
    /// A derived speed or direction needs a previous fix that moved further than the two fixes' accuracies together
    /// (anything less may be noise of a device standing still) within `maximumGapSeconds` (over a longer gap the
    /// straight line says nothing).
    ///
    /// `needsHeading`: false when only the speed is asked for (trips and speeding), which spares deriving a heading
    /// for a fix that reports its speed.
    init(
        position: Position,
        margin: Double,
        previous: (fix: Fix, margin: Double)?,
        maximumGapSeconds: Int,
        needsHeading: Bool = true
    ) {
        if let speed = position.speed {
            self.speed = speed
            speedBasis = .reportedSpeed
        }
        heading = position.heading
        guard speed == nil || (heading == nil && needsHeading), let previous else { return }
        let elapsed = Double(position.timestamp - previous.fix.timestamp) / 1000
        guard elapsed > 0, elapsed <= Double(maximumGapSeconds) else { return }
        let displacement = previous.fix.coordinate.distance(to: position.coordinate)
        guard displacement > previous.margin + margin else {
            if speed == nil {
                isStanding = true
                speedBasis = .derivedSpeed
            }
            return
        }
        if speed == nil {
            speed = displacement / elapsed
            speedBasis = .derivedSpeed
        }
        if heading == nil {
            let plane = LocalPlane(at: previous.fix.coordinate)
            heading = LocalPlane.bearing(
                x: plane.x(longitude: position.coordinate.longitude),
                y: plane.y(latitude: position.coordinate.latitude)
            )
        }
    }

    /// The angle between two compass directions, 0...180 degrees.
    static func angle(between first: Double, and second: Double) -> Double {
        var difference = (first - second).truncatingRemainder(dividingBy: 360)
        if difference < 0 { difference += 360 }
        return difference > 180 ? 360 - difference : difference
    }
}
