import Testing

@testable import GeoCore

/// The pin rules for catalog geofences, one device's fixes at a time (`CatalogTracking`, not yet called by the
/// tracker: issue 64).
@Suite("Catalog geofences under the pin rules, for one device", .timeLimit(.minutes(5)))
struct CatalogTrackingTests {
    static let depot = (latitude: 48.5, longitude: 7.8)
    let configuration = TrackerConfiguration()
    var catalog = GeofenceCatalog()
    var device = CatalogVisits(subscriptions: ["depots"])
    var previous: Fix?
    var offset: Int64 = 0

    static func circle(
        _ id: String,
        metresEast: Double = 0,
        radius: Double = 200,
        tags: [String] = ["depots"],
        dwellSeconds: Int? = nil
    ) -> CatalogGeofence {
        let center = point(metresEast: metresEast)
        return CatalogGeofence(
            geofence: Pin(id: id, center: center, radius: radius, dwellSeconds: dwellSeconds)!,
            tags: tags
        )!
    }

    static func point(metresEast: Double) -> Coordinate {
        Coordinate(
            latitude: depot.latitude,
            longitude: depot.longitude + metresEast
                / LocalPlane(at: Coordinate(latitude: depot.latitude, longitude: 0)!)
                .metresPerDegreeEast
        )!
    }

    /// A fix `metresEast` of the depot's centre at `second`, accurate to 10 m; the events it gives.
    mutating func fix(metresEast: Double, at second: Int64, maxVisits: Int = 1_000) -> (types: [String], refused: Int) {
        let fix = Fix(coordinate: Self.point(metresEast: metresEast), timestamp: second * 1000, accuracy: 10)
        let context = GeofenceEvaluator.FixContext(
            fix: fix,
            margin: 10,
            previous: previous.map { ($0, 10) },
            motion: FixMotion()
        )
        previous = fix
        offset += 1
        var numbering = EventNumbering(
            origin: MessageOrigin(topic: "positions", partition: 0, offset: offset, timestamp: fix.timestamp),
            deviceId: "truck-17",
            time: fix.timestamp
        )
        var events: [DeviceEvent] = []
        let tracking = CatalogTracking(evaluator: GeofenceEvaluator(configuration: configuration), maxVisits: maxVisits)
        let refused = tracking.apply(
            context,
            to: &device,
            catalog: catalog,
            defaultTags: [],
            numbering: &numbering,
            events: &events
        )
        return (events.map { "\($0.type) \(Self.geofenceId($0.payload))" }, refused)
    }

    static func geofenceId(_ payload: DeviceEvent.Payload) -> String {
        switch payload {
        case .geofenceEntered(let crossing), .geofenceExited(let crossing):
            "\(crossing.pin.id)\(crossing.initial ? " initial" : "")"
        case .geofenceDwelled(let dwell): dwell.pin.id
        case .geofenceCrossed(let passage): passage.pin.id
        default: ""
        }
    }

    @Test("driven in and out: entered, exited; outside it keeps nothing")
    mutating func inAndOut() {
        catalog.put(Self.circle("depot"), at: 0)
        #expect(fix(metresEast: -5_000, at: 10).types == [], "far away, first fix: nothing, and nothing kept")
        #expect(device.visits.isEmpty)
        #expect(fix(metresEast: 0, at: 20).types == ["geofence.entered depot"])
        #expect(device.visits["depot"]?.membership == .inside)
        #expect(fix(metresEast: 0, at: 30).types == [])
        // Far away in one step: the lookup does not meet the depot any more; its visit does.
        #expect(fix(metresEast: 30_000, at: 40).types == ["geofence.exited depot"])
        #expect(device.visits.isEmpty)
    }

    @Test("a geofence added where the device is: its initial state at the next fix; one already there is a crossing")
    mutating func addedWhereTheDeviceIs() {
        #expect(fix(metresEast: 0, at: 10).types == [])
        catalog.put(Self.circle("depot"), at: 15_000)
        #expect(fix(metresEast: 0, at: 20).types == ["geofence.entered depot initial"])
        catalog.put(Self.circle("yard", metresEast: 1_000), at: 25_000)
        #expect(fix(metresEast: 5_000, at: 30).types == ["geofence.exited depot"], "the yard's first decision: outside")
        #expect(fix(metresEast: 1_000, at: 40).types == ["geofence.entered yard"], "met before: a crossing")
    }

    @Test("a change applies from its message time: a fix stamped before it sees the old catalog")
    mutating func byMessageTime() {
        catalog.put(Self.circle("depot"), at: 50_000)
        #expect(fix(metresEast: 0, at: 40).types == [], "the depot is in force from 50 s")
        #expect(fix(metresEast: 0, at: 50).types == ["geofence.entered depot initial"])
    }

    @Test("deleted, unsubscribed or retagged while inside: the visit ends, announcing nothing; moved away: exited")
    mutating func changesWhileInside() {
        for id in ["a", "b", "c", "d"] { catalog.put(Self.circle(id), at: 0) }
        #expect(fix(metresEast: 0, at: 10).types.count == 4)
        catalog.delete(id: "a", at: 15_000)
        catalog.put(Self.circle("b", tags: ["yards"]), at: 15_000)
        catalog.put(Self.circle("c", metresEast: 3_000), at: 15_000)
        #expect(fix(metresEast: 0, at: 20).types == ["geofence.exited c"])
        #expect(Set(device.visits.keys) == ["d"])
        device.unsubscribe(from: ["depots"])
        #expect(fix(metresEast: 0, at: 30).types == [])
        #expect(device.visits.isEmpty)
    }

    @Test("a tag the device does not subscribe to reaches nothing")
    mutating func otherTags() {
        catalog.put(Self.circle("store", tags: ["stores"]), at: 0)
        #expect(fix(metresEast: 0, at: 10).types == [])
        #expect(device.visits.isEmpty)
    }

    @Test("dwell, once a visit")
    mutating func dwell() {
        catalog.put(Self.circle("depot", dwellSeconds: 60), at: 0)
        #expect(fix(metresEast: -1_000, at: 0).types == [])
        #expect(fix(metresEast: 0, at: 10).types == ["geofence.entered depot"])
        #expect(fix(metresEast: 0, at: 40).types == [])
        #expect(fix(metresEast: 0, at: 70).types == ["geofence.dwelled depot"])
        #expect(fix(metresEast: 0, at: 100).types == [])
    }

    @Test("at most maxVisits visits: a geofence met beyond them is not decided, and counted")
    mutating func bounded() {
        for id in ["a", "b", "c"] { catalog.put(Self.circle(id), at: 0) }
        let (types, refused) = fix(metresEast: 0, at: 10, maxVisits: 2)
        #expect(types.count == 2 && refused == 1)
        #expect(device.visits.count == 2)
    }
}
