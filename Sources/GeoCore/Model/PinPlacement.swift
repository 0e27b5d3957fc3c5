/// Where a point is relative to a pin's edge.
struct PinPlacement {
    let inside: Bool
    /// Metres from the point to the nearest point of the pin's edge.
    let edgeDistance: Double
    /// That nearest point, in metres east and north of the point (``LocalPlane``): the direction of the pin.
    let nearestX: Double
    let nearestY: Double
}
