import TestSupport
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
    /// The device's catalog area, kept from fix to fix as the tracker keeps it (the catalog's changes between fixes
    /// make it again).
    var area: CatalogArea?

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

    /// What the rules take of a fix accurate to 10 m after `previous`.
    static func context(_ fix: Fix, after previous: Fix?) -> GeofenceEvaluator.FixContext {
        GeofenceEvaluator.FixContext(fix: fix, margin: 10, previous: previous.map { ($0, 10) }, motion: FixMotion())
    }

    /// A fix `metresEast` of the depot's centre at `second`, accurate to 10 m; the events it gives.
    mutating func fix(metresEast: Double, at second: Int64, maxVisits: Int = 1_000) -> (types: [String], refused: Int) {
        let fix = Fix(coordinate: Self.point(metresEast: metresEast), timestamp: second * 1000, accuracy: 10)
        let context = Self.context(fix, after: previous)
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
            area: &area,
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

    @Test(
        "the device's area gives the events of the catalog's grid asked at every fix: drives, changes, subscriptions",
        arguments: [3, 17, 40]
    )
    func areaAgreesWithGrid(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var catalog = GeofenceCatalog()
        let tagSets = [["depots"], ["yards"], ["depots", "yards"], ["stores"]]
        func put(_ index: Int, at time: Int64) {
            catalog.put(
                Self.circle(
                    "g\(index)",
                    metresEast: Double.random(in: -3_000...3_000, using: &random),
                    radius: Double.random(in: 50...400, using: &random),
                    tags: tagSets[Int.random(in: 0..<tagSets.count, using: &random)]
                ),
                at: time
            )
        }
        for index in 0..<60 { put(index, at: 0) }
        let tracking = CatalogTracking(evaluator: GeofenceEvaluator(configuration: configuration), maxVisits: 1_000)
        var (kept, asked) = (CatalogVisits(subscriptions: ["depots"]), CatalogVisits(subscriptions: ["depots"]))
        var area: CatalogArea?
        var unused: CatalogArea?
        var previous: Fix?
        var east = 0.0
        for step in 1...600 {
            let time = Int64(step) * 10_000
            if step % 50 == 0 { put(Int.random(in: 0..<80, using: &random), at: time - 5_000) }
            // Stamped ahead of the fixes: in force from a fix after the one that follows it.
            if step % 50 == 25 { put(Int.random(in: 0..<80, using: &random), at: time + 15_000) }
            if step % 70 == 0 { catalog.delete(id: "g\(Int.random(in: 0..<60, using: &random))", at: time - 5_000) }
            // The device's tags change while its area stands.
            if step % 80 == 20 {
                kept.subscribe(to: ["yards"])
                asked.subscribe(to: ["yards"])
            } else if step % 80 == 60 {
                kept.unsubscribe(from: ["yards"])
                asked.unsubscribe(from: ["yards"])
            }
            // Mostly driving (up to 150 m a fix), now and then a jump of kilometres.
            east +=
                step % 97 == 0
                ? Double.random(in: -4_000...4_000, using: &random) : Double.random(in: -150...150, using: &random)
            east = min(4_000, max(-4_000, east))
            let fix = Fix(coordinate: Self.point(metresEast: east), timestamp: time, accuracy: 10)
            let context = Self.context(fix, after: previous)
            previous = fix
            let origin = MessageOrigin(topic: "positions", partition: 0, offset: Int64(step), timestamp: time)
            var (keptEvents, askedEvents) = ([DeviceEvent](), [DeviceEvent]())
            var numbering = EventNumbering(origin: origin, deviceId: "d", time: time)
            _ = tracking.apply(
                context,
                to: &kept,
                catalog: catalog,
                area: &area,
                defaultTags: [],
                numbering: &numbering,
                events: &keptEvents
            )
            numbering = EventNumbering(origin: origin, deviceId: "d", time: time)
            _ = tracking.apply(
                context,
                to: &asked,
                catalog: catalog,
                area: &unused,
                keepsArea: false,
                defaultTags: [],
                numbering: &numbering,
                events: &askedEvents
            )
            #expect(keptEvents == askedEvents, "step \(step), seed \(seed)")
            #expect(kept == asked, "step \(step), seed \(seed)")
        }
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
