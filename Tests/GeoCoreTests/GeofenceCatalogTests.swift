import GeoCore
import JSONCodec
import TestSupport
import Testing

@Suite("The fleet's geofence catalog: versions by message time, found near a fix", .timeLimit(.minutes(5)))
struct GeofenceCatalogTests {
    static func circle(
        _ id: String,
        _ latitude: Double,
        _ longitude: Double,
        radius: Double,
        tags: [String] = ["depots"]
    )
        -> CatalogGeofence
    {
        CatalogGeofence(
            geofence: Pin(id: id, center: Coordinate(latitude: latitude, longitude: longitude)!, radius: radius)!,
            tags: tags
        )!
    }

    static func ids(_ catalog: GeofenceCatalog, near latitude: Double, _ longitude: Double, at time: Int64) -> [String]
    {
        var found: [String] = []
        catalog.forEach(
            meeting: (
                west: longitude - 0.001, south: latitude - 0.001, east: longitude + 0.001, north: latitude + 0.001
            ),
            at: time
        ) { geofence, _ in found.append(geofence.id) }
        return found.sorted()
    }

    @Test("a change is in force from its message time: before it the old version, after it the new, none once deleted")
    func versionsByTime() {
        var catalog = GeofenceCatalog()
        catalog.put(Self.circle("depot", 48.0, 7.0, radius: 200), at: 1_000)
        // Moved 5 km east at 2,000, deleted at 3,000.
        catalog.put(Self.circle("depot", 48.0, 7.07, radius: 200), at: 2_000)
        catalog.delete(id: "depot", at: 3_000)
        #expect(Self.ids(catalog, near: 48.0, 7.0, at: 999).isEmpty)
        #expect(Self.ids(catalog, near: 48.0, 7.0, at: 1_000) == ["depot"])
        #expect(Self.ids(catalog, near: 48.0, 7.0, at: 1_999) == ["depot"])
        #expect(Self.ids(catalog, near: 48.0, 7.0, at: 2_000).isEmpty, "moved away")
        #expect(Self.ids(catalog, near: 48.0, 7.07, at: 2_500) == ["depot"])
        #expect(Self.ids(catalog, near: 48.0, 7.07, at: 3_000).isEmpty, "deleted")
        #expect(catalog.count == 0 && catalog["depot"] == nil)
        #expect(catalog.versionCount == 2)
        // Asked by id, as a device inside it asks at a fix far away.
        #expect(catalog.geofence("depot", at: 500) == nil)
        #expect(catalog.geofence("depot", at: 1_500)?.since == 1_000)
        #expect(catalog.geofence("depot", at: 2_500)?.since == 2_000)
        #expect(catalog.geofence("depot", at: 3_000) == nil)

        // No position stamped before 2,500 is left to ask: the first version goes, the second stays until 3,000.
        #expect(catalog.forgetVersions(endedBy: 2_500) == 1)
        #expect(catalog.versionCount == 1)
        #expect(catalog.geofence("depot", at: 2_600)?.since == 2_000)
        // Back after its tombstone: a new version, the old ones still answered at their times.
        catalog.put(Self.circle("depot", 48.0, 7.0, radius: 200), at: 4_000)
        #expect(catalog.count == 1 && catalog["depot"] != nil)
        #expect(catalog.geofence("depot", at: 3_500) == nil)
        #expect(catalog.geofence("depot", at: 2_600)?.since == 2_000)
        #expect(catalog.geofence("depot", at: 4_000)?.since == 4_000)
        catalog.delete(id: "depot", at: 5_000)
        #expect(Self.ids(catalog, near: 48.0, 7.07, at: 2_600) == ["depot"])
        #expect(catalog.forgetVersions(endedBy: 3_000) == 1)
        #expect(catalog.versionCount == 1)
        #expect(catalog.geofence("depot", at: 2_600) == nil, "forgotten")
        #expect(catalog.forgetVersions(endedBy: 5_000) == 1)
        #expect(catalog.versionCount == 0 && catalog.count == 0)
    }

    @Test(
        "moved, deleted and forgotten: a query finds each geofence's version of the time asked, and nothing forgotten"
    )
    func churn() {
        var random = SplitMix64(seed: 7)
        var catalog = GeofenceCatalog()
        // 2,000 geofences in a 0.2-degree square, each moved or deleted once at time 100.
        var places: [(Double, Double)] = []
        for index in 0..<2_000 {
            let place = (
                48 + Double.random(in: 0..<0.2, using: &random), 7 + Double.random(in: 0..<0.2, using: &random)
            )
            places.append(place)
            catalog.put(Self.circle("g\(index)", place.0, place.1, radius: 50), at: 0)
        }
        for index in 0..<2_000 where index % 2 == 0 {
            catalog.put(Self.circle("g\(index)", places[index].0 + 1, places[index].1, radius: 50), at: 100)
        }
        for index in 0..<2_000 where index % 2 == 1 { catalog.delete(id: "g\(index)", at: 100) }
        func all(at time: Int64, latitude: Double) -> Set<String> {
            var found = Set<String>()
            catalog.forEach(meeting: (west: 7, south: latitude, east: 7.2, north: latitude + 0.2), at: time) {
                geofence,
                _ in found.insert(geofence.id)
            }
            return found
        }
        #expect(all(at: 50, latitude: 48).count == 2_000)
        #expect(all(at: 100, latitude: 48).isEmpty)
        #expect(all(at: 100, latitude: 49) == Set((0..<2_000).filter { $0 % 2 == 0 }.map { "g\($0)" }))
        #expect(catalog.count == 1_000 && catalog.versionCount == 3_000)
        #expect(catalog.forgetVersions(endedBy: 100) == 2_000)
        #expect(catalog.versionCount == 1_000)
        #expect(all(at: 50, latitude: 48).isEmpty, "the old versions are gone from the grid too")
        // The numbers freed are used again: the catalog does not grow with churn.
        for index in 0..<1_000 { catalog.put(Self.circle("n\(index)", 10, 10, radius: 50), at: 200) }
        #expect(catalog.versionCount == 2_000 && all(at: 200, latitude: 49).count == 1_000)
        #expect(all(at: 200, latitude: 48).isEmpty, "a number used again is not found where its old version was")
    }

    @Test("a record stamped before the version it replaces takes over at that version's start, never earlier")
    func recordStampedEarly() {
        var catalog = GeofenceCatalog()
        catalog.put(Self.circle("gate", 10, 10, radius: 100), at: 5_000)
        catalog.put(Self.circle("gate", 10, 10, radius: 100, tags: ["gates"]), at: 4_000)
        var tags: [[String]] = []
        catalog.forEach(meeting: (west: 9.99, south: 9.99, east: 10.01, north: 10.01), at: 5_000) {
            geofence,
            _ in tags.append(geofence.tags)
        }
        #expect(tags == [["gates"]])
        #expect(Self.ids(catalog, near: 10, 10, at: 4_500).isEmpty, "nothing was in force before 5,000")
    }

    @Test("tags are sorted and unique; a geofence without a tag, or with too many or too long, is refused")
    func tags() {
        let pin = Pin(id: "a", center: Coordinate(latitude: 0, longitude: 0)!, radius: 10)!
        #expect(CatalogGeofence(geofence: pin, tags: ["b", "a", "b"])?.tags == ["a", "b"])
        #expect(CatalogGeofence(geofence: pin, tags: []) == nil)
        #expect(CatalogGeofence(geofence: pin, tags: [""]) == nil)
        #expect(CatalogGeofence(geofence: pin, tags: [String(repeating: "x", count: 65)]) == nil)
        #expect(CatalogGeofence(geofence: pin, tags: (0...32).map { "t\($0)" }) == nil)
    }

    /// Whether the geofence's area comes within `box` (a point of a circle's edge, a polygon's box), decided the slow
    /// way: what the grid must find.
    static func mayMeet(
        _ geofence: CatalogGeofence,
        _ box: (west: Double, south: Double, east: Double, north: Double)
    )
        -> Bool
    {
        switch geofence.geofence.shape {
        case .polygon(let polygon):
            let bounds = polygon.bounds
            return bounds.west <= box.east && box.west <= bounds.east && bounds.south <= box.north
                && box.south <= bounds.north
        case .circle(let center, let radius):
            // The point of the box nearest the centre, longitudes taken around the antimeridian too.
            let latitude = min(max(center.latitude, box.south), box.north)
            var nearest = Double.infinity
            for shift in [-360.0, 0, 360] {
                let longitude = min(max(center.longitude + shift, box.west), box.east) - shift
                let point = Coordinate(latitude: latitude, longitude: min(max(longitude, -180), 180))!
                nearest = min(nearest, center.distance(to: point))
            }
            return nearest <= radius
        }
    }

    @Test(
        "every geofence that reaches a query box is found, once, whatever its size, near the poles and the antimeridian",
        arguments: [UInt64(1), 2, 3]
    )
    func gridFindsEveryGeofence(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var catalog = GeofenceCatalog()
        var geofences: [CatalogGeofence] = []
        for index in 0..<4_000 {
            let latitude = Double.random(in: -89.9...89.9, using: &random)
            // A fifth near the antimeridian.
            let longitude =
                index % 5 == 0
                ? (Bool.random(using: &random) ? 179.9 : -179.9) + Double.random(in: -0.1...0.1, using: &random)
                : Double.random(in: -180...180, using: &random)
            let radius = [5.0, 150, 2_000, 40_000, 100_000][index % 5]
            let clamped = min(max(longitude, -180), 180)
            if index % 3 == 0 {
                let side = radius / 111_000
                let west = max(-180, clamped - side)
                let east = min(180, clamped + side)
                let south = max(-90, latitude - side)
                let north = min(90, latitude + side)
                let shape = try PolygonShape(
                    polygons: [[[[west, south], [east, south], [east, north], [west, north], [west, south]]]],
                    isMulti: false
                )
                geofences.append(CatalogGeofence(geofence: Pin(id: "p\(index)", shape: .polygon(shape))!, tags: ["t"])!)
            } else {
                geofences.append(Self.circle("c\(index)", latitude, clamped, radius: radius, tags: ["t"]))
            }
            catalog.put(geofences.last!, at: 0)
        }
        for query in 0..<1_000 {
            let latitude = Double.random(in: -90...90, using: &random)
            let longitude =
                query % 4 == 0
                ? (Bool.random(using: &random) ? 180.0 : -180.0) + Double.random(in: -0.3...0.3, using: &random)
                : Double.random(in: -180...180, using: &random)
            let half = [0.0005, 0.01, 0.2, 3][query % 4]
            let box = (
                west: longitude - half, south: max(-90, latitude - half), east: longitude + half,
                north: min(90, latitude + half)
            )
            var found: [String] = []
            catalog.forEach(meeting: box, at: 1) { geofence, _ in found.append(geofence.id) }
            let expected = geofences.filter { Self.mayMeet($0, box) }.map(\.id)
            #expect(found.count == Set(found).count, "found twice: query \(query), seed \(seed)")
            let missing = Set(expected).subtracting(found)
            #expect(missing.isEmpty, "query \(query) \(box) missed \(missing.sorted().prefix(5)), seed \(seed)")
        }
    }
}

@Suite("A catalog record's value: a pin's members at the top level, and tags", .timeLimit(.minutes(5)))
struct CatalogRecordDecodingTests {
    static func decode(_ text: String, key: String? = "depot-7") -> Result<CatalogGeofence, DecodingFailure> {
        Array(text.utf8).withUnsafeBytes { CatalogGeofence.decode(json: $0, key: key) }
    }

    @Test("a circle and a polygon with their tags, title, metadata and times")
    func decodes() throws {
        let circle = try Self.decode(
            #"{"id":"depot-7","lat":48.57,"lon":7.8,"radius":250,"tags":["depots","north"],"title":"Depot 7","#
                + #""metadata":{"site":7},"dwellSeconds":600,"approachSeconds":300}"#
        ).get()
        #expect(circle.id == "depot-7" && circle.tags == ["depots", "north"])
        #expect(circle.geofence.shape == .circle(center: Coordinate(latitude: 48.57, longitude: 7.8)!, radius: 250))
        #expect(circle.geofence.title == "Depot 7" && circle.geofence.metadataJSON == #"{"site":7}"#)
        #expect(circle.geofence.dwellSeconds == 600 && circle.geofence.approachSeconds == 300)

        let polygon = try Self.decode(
            #"{"tags":["yards"],"id":"depot-7","shape":{"type":"Polygon","coordinates":[[[7,48],[7.1,48],[7.1,48.1],[7,48]]]}}"#
        ).get()
        guard case .polygon(let shape) = polygon.geofence.shape else {
            Issue.record("not a polygon: \(polygon)")
            return
        }
        #expect(shape.vertexCount == 3 && polygon.tags == ["yards"])
    }

    @Test(
        "what cannot be used says what is wrong",
        arguments: [
            (#"{"id":"depot-7","lat":48,"lon":7,"radius":250}"#, "tags is required"),
            (#"{"id":"depot-7","lat":48,"lon":7,"radius":250,"tags":[]}"#, "tags must hold 1 to 32 tags"),
            (#"{"id":"depot-7","lat":48,"lon":7,"radius":250,"tags":"depots"}"#, "tags must be a list of strings"),
            (#"{"id":"depot-7","lat":48,"lon":7,"radius":250,"tags":["a",3]}"#, "tags tag 1 must be a string"),
            (
                #"{"id":"depot-8","lat":48,"lon":7,"radius":250,"tags":["a"]}"#,
                "id must be the record's key ('depot-7')"
            ),
            (#"{"lat":48,"lon":7,"radius":250,"tags":["a"]}"#, "id is required"),
            (#"{"id":"depot-7","lat":48,"lon":7,"tags":["a"]}"#, "radius is required"),
            (
                #"{"id":"depot-7","radius":5,"shape":{"type":"Polygon","coordinates":[[[7,48],[7.1,48],[7.1,48.1],[7,48]]]},"tags":["a"]}"#,
                "the geofence has a shape and a centre or radius"
            ),
            (#"["depot-7"]"#, "a geofence"),
        ]
    )
    func refused(text: String, mentions: String) {
        guard case .failure(let failure) = Self.decode(text) else {
            Issue.record("decoded: \(text)")
            return
        }
        #expect(failure.description.contains(mentions), "\(failure.description)")
    }

    @Test("a record without a key takes its id from the value")
    func withoutKey() throws {
        let geofence = try Self.decode(#"{"id":"gate","lat":1,"lon":2,"radius":30,"tags":["gates"]}"#, key: nil).get()
        #expect(geofence.id == "gate")
    }
}
