import Foundation
import GeoCore
import TestSupport
import Testing

@Suite("Circle decisions", .timeLimit(.minutes(5)))
struct CircleDecisionTests {
    /// What a fix decides by the rule itself: inside when at least `margin` inside the edge, outside when more
    /// than `margin` outside it, measured with the haversine.
    static func decisionByHaversine(
        _ fix: Coordinate,
        center: Coordinate,
        radius: Double,
        margin: Double
    )
        -> Membership?
    {
        let distance = fix.distance(to: center)
        if distance < radius { return radius - distance >= margin ? .inside : nil }
        return distance - radius > margin ? .outside : nil
    }

    /// The decision skips the haversine when the plane's bounds of the distance settle it; it must settle it
    /// as the haversine would, however close to the hysteresis band's edges the fix lies, at any latitude,
    /// across the antimeridian and near the poles.
    @Test("decisions agree with the haversine's, a micrometre from the band's edges included")
    func decisionsAgreeWithTheHaversine() {
        var random = SplitMix64(seed: 0x00C1_C1E5)
        let offsets: [Double] = [0, 1e-7, 1e-5, 1e-3, 0.1, 1, 10]
        var disagreements: [String] = []
        for _ in 0..<200_000 {
            let center = Coordinate(latitude: random.uniform(-89.5, 89.5), longitude: random.uniform(-180, 180))!
            let radius = exp(random.uniform(0, log(100_000)))
            let margin = random.next(below: 4) == 0 ? 0 : random.uniform(0, 300)
            let edges = [radius - margin, radius, radius + margin]
            var target = edges[random.next(below: 3)]
            let offset = offsets[random.next(below: offsets.count)]
            target += random.next(below: 2) == 0 ? offset : -offset
            if random.next(below: 8) == 0 { target = random.uniform(0, 3 * radius + 1000) }
            let fix = destination(from: center, distance: max(0, target), bearing: random.uniform(0, 360))
            let decided = PinShape.circle(center: center, radius: radius)
                .decision(at: fix, margin: margin, plane: LocalPlane(at: fix))
            let expected = Self.decisionByHaversine(fix, center: center, radius: radius, margin: margin)
            if decided != expected {
                disagreements.append(
                    "\(fix) vs centre \(center), radius \(radius), margin \(margin): \(String(describing: decided)), "
                        + "the haversine says \(String(describing: expected))"
                )
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) disagreements, first: \(disagreements.prefix(3))")
    }
}
