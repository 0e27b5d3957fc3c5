package import JSONCodec

/// The held devices nearest a point: the dispatcher's "which of my vehicles are nearest this pick-up, and how far",
/// answered over every registry (one per apply thread) and written as the JSON of `GET /devices/nearby`
/// (`Schemas/device-nearby.schema.json`).
///
/// Each device comes with its distance, its last fix, its speed there (reported, or derived from its last two fixes;
/// null until this instance applies a fix of it) and, when it moves at ``TrackerConfiguration/approachMinimumSpeed``
/// or faster, a straight-line ETA to the point at that speed.
public struct DeviceNearbySelection: Sendable {
    public let center: Coordinate
    public let radius: Double
    public let limit: Int
    /// Nearest first.
    public let devices: [DeviceRegistry.NearbyDevice]
    private let minimumSpeed: Double

    public init(center: Coordinate, radius: Double, limit: Int, from registries: [DeviceRegistry]) {
        self.center = center
        self.radius = radius
        self.limit = limit
        minimumSpeed = registries.first?.tracker.configuration.approachMinimumSpeed ?? 1
        // Each registry's nearest `limit`, merged: the nearest `limit` overall are among them. Equal distances go
        // by device id, so that the answer does not depend on which thread holds which device.
        devices = Array(
            registries.flatMap { $0.nearby(to: center, within: radius, limit: limit) }
                .sorted { ($0.distance, $0.state.deviceId) < ($1.distance, $1.state.deviceId) }
                .prefix(limit)
        )
    }

    /// `{"center": {"lat", "lon"}, "radiusMeters": r, "devices": [{"deviceId", "distanceMeters", "status",
    /// "lastFix", "speedMetersPerSecond", "etaSeconds"}]}`.
    public func json() -> [UInt8] { json(addingTo: nil) }

    /// ``json()`` with more members in each device's object.
    ///
    /// - Parameter more: writes more members of each device's object, given the device's index in ``devices`` (the
    ///   street address of its last fix, which the operations port adds).
    /// - Returns: the JSON.
    package func json(addingTo more: ((Int, inout JSONWriter) -> Void)?) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("center")
        json.beginObject()
        json.key("lat")
        json.number(center.latitude)
        json.key("lon")
        json.number(center.longitude)
        json.endObject()
        json.key("radiusMeters")
        json.number(radius)
        json.key("devices")
        json.beginArray()
        for (index, device) in devices.enumerated() {
            json.beginObject()
            json.member("deviceId", device.state.deviceId)
            json.key("distanceMeters")
            json.number(device.distance.rounded())
            json.member("status", device.confirmedByFix ? "current" : "cached")
            json.key("lastFix")
            if let fix = device.state.lastFix { json.fix(fix) } else { json.null() }
            json.key("speedMetersPerSecond")
            if let speed = device.speed { json.number((speed * 100).rounded() / 100) } else { json.null() }
            json.key("etaSeconds")
            if let speed = device.speed, speed >= minimumSpeed {
                json.number((device.distance / speed).rounded())
            } else {
                json.null()
            }
            more?(index, &json)
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.takeOutput()
    }
}
