import Countries
import GeoCore
import Places
import TestSupport
import Testing

/// Region, locality and time zone of well-known places: the cases offline geocoders get wrong.
@Suite("Places of a point", .timeLimit(.minutes(5)))
struct PlaceLookupTests {
    @Test(
        "time zones follow their own borders, not the states'",
        arguments: [
            // (place, latitude, longitude, time zone, region)
            ("El Paso: Texas on mountain time", 31.7619, -106.4850, "America/Denver", "US-TX"),
            ("Dallas: Texas on central time", 32.7767, -96.7970, "America/Chicago", "US-TX"),
            ("Gary: north-west Indiana on central time", 41.5934, -87.3464, "America/Chicago", "US-IN"),
            ("Indianapolis: the rest of Indiana", 39.7684, -86.1581, "America/Indiana/Indianapolis", "US-IN"),
            ("Evansville: south-west Indiana on central time", 37.9716, -87.5711, "America/Chicago", "US-IN"),
            ("Phenix City: Alabama on eastern time", 32.4709, -85.0008, "America/New_York", "US-AL"),
        ] as [(String, Double, Double, String, String)]
    )
    func timeZonesAcrossStates(place: String, latitude: Double, longitude: Double, zone: String, region: String) {
        let answer = lookUp(latitude, longitude)
        #expect(answer.timeZone == .decided(zone), "\(place)")
        #expect(answer.region.value?.code == region, "\(place)")
        #expect(answer.region.value?.source == .polygon, "\(place)")
    }

    @Test(
        "a place near a border gets its own country's region and locality, never the neighbour's",
        arguments: [
            // (place, latitude, longitude, region, locality, time zone)
            ("Kehl, across the Rhine from Strasbourg", 48.5735, 7.8150, "DE-BW", "Kehl", "Europe/Berlin"),
            ("Strasbourg, across the Rhine from Kehl", 48.5734, 7.7521, "FR-GES", "Strasbourg", "Europe/Paris"),
            ("Llívia, a Spanish enclave in France", 42.4636, 1.9817, "ES-CT", "Llívia", "Europe/Madrid"),
            ("San Marino, inside Italy", 43.9375, 12.4500, "SM-07", "San Marino", "Europe/San_Marino"),
            ("Munich", 48.1370, 11.5750, "DE-BY", "Munich", "Europe/Berlin"),
        ] as [(String, Double, Double, String, String, String)]
    )
    func borders(place: String, latitude: Double, longitude: Double, region: String, locality: String, zone: String) {
        let answer = lookUp(latitude, longitude)
        #expect(answer.region.value?.code == region, "\(place)")
        #expect(answer.region.value?.source == .nearestPlace, "\(place)")
        #expect(answer.locality?.name == locality, "\(place)")
        #expect(answer.timeZone == .decided(zone), "\(place)")
    }

    @Test(
        "the antimeridian is no edge",
        arguments: [
            ("Taveuni (Fiji) east of 180", -16.84, 179.99, "FJ", "Pacific/Fiji"),
            ("Taveuni (Fiji) west of 180", -16.84, -179.99, "FJ", "Pacific/Fiji"),
            ("Chukotka east of 180", 66.0, 179.98, "RU", "Asia/Anadyr"),
            ("Chukotka west of 180", 66.0, -179.98, "RU", "Asia/Anadyr"),
        ] as [(String, Double, Double, String, String)]
    )
    func antimeridian(place: String, latitude: Double, longitude: Double, country: String, zone: String) {
        let answer = lookUp(latitude, longitude)
        #expect(answer.timeZone == .decided(zone), "\(place)")
        #expect(answer.region.value.map { String($0.countryCode) } == country, "\(place)")
        // The nearest place is found across the antimeridian: within 200 km, not half the globe away.
        #expect((answer.locality?.distance ?? .infinity) < 200_000, "\(place)")
    }

    @Test("the sea: a coast keeps its region, the open sea has a nautical time zone and no region")
    func sea() {
        let offLongIsland = lookUp(40.55, -73.50)
        #expect(offLongIsland.region.value?.code == "US-NY")
        #expect(offLongIsland.timeZone == .decided("America/New_York"))
        let atlantic = lookUp(30.0, -40.0)
        #expect(atlantic.region == .decided(nil))
        #expect(atlantic.timeZone == .decided("Etc/GMT+3"))
        // No country claims the point: the nearest place of any country (the Azores, some 1,000 km away).
        #expect(atlantic.locality != nil)
        #expect(lookUp(0.0, -150.0).timeZone == .decided("Etc/GMT+10"))
    }

    @Test("a fix whose accuracy reaches across a boundary does not decide it")
    func accuracy() {
        // Anthony, on the Texas-New Mexico line (32° N): a 5 km disc holds both states, one time zone.
        let anthony = lookUp(31.99, -106.60, accuracy: 5_000)
        #expect(anthony.region == .undecided)
        #expect(anthony.timeZone == .decided("America/Denver"))
        #expect(lookUp(31.99, -106.60, accuracy: 50).region.value?.code == "US-TX")
        // Gary, 25 km from the Indiana's central/eastern line: a 50 km disc reaches it.
        #expect(lookUp(41.5934, -87.3464, accuracy: 50_000).timeZone == .undecided)
        #expect(lookUp(41.5934, -87.3464, accuracy: 1_000).timeZone == .decided("America/Chicago"))
        // Kehl and Strasbourg: nearest-place regions of one country; a disc in Germany answers for Germany only.
        #expect(lookUp(48.1370, 11.5750, accuracy: 2_000).region.value?.code == "DE-BY")
    }

    @Test("the locality is the nearest place, with its GeoNames id, population and distance")
    func locality() throws {
        let answer = lookUp(40.7128, -74.0060)
        let locality = try #require(answer.locality)
        #expect(locality.name == "New York City")
        #expect(locality.geonameId == 5_128_581)
        #expect(locality.population > 8_000_000)
        #expect(locality.distance < 1_000)
        #expect(answer.region.value == PlaceRegion(code: "US-NY", name: "New York", source: .polygon))
    }

    @Test("the combined answer (one search for region and locality) is the three separate answers")
    func combined() {
        var random = SplitMix64(seed: 17)
        var compared = 0
        while compared < 20_000 {
            let point = Coordinate(latitude: random.uniform(-56, 72), longitude: random.uniform(-180, 180))!
            let country = countryIndex.country(at: point)?.code
            let separate = PlaceAnswer(
                region: placeIndex.region(at: point, within: 0, countryCode: country),
                locality: placeIndex.locality(near: point, countryCode: country),
                timeZone: placeIndex.timeZone(at: point, within: 0)
            )
            #expect(placeIndex.places(at: point, within: 0, countryCode: country) == separate, "\(point)")
            compared += 1
        }
    }

    @Test("current UTC offsets follow daylight saving time")
    func offsets() {
        let january: Int64 = 1_768_478_400_000  // 2026-01-15T12:00:00Z
        let july: Int64 = 1_784_116_800_000  // 2026-07-15T12:00:00Z
        #expect(placeIndex.utcOffset(ofTimeZone: "America/New_York", at: january) == -5 * 3600)
        #expect(placeIndex.utcOffset(ofTimeZone: "America/New_York", at: july) == -4 * 3600)
        #expect(placeIndex.utcOffset(ofTimeZone: "Asia/Kolkata", at: july) == 19_800)
        #expect(placeIndex.utcOffset(ofTimeZone: "Etc/GMT+3", at: july) == -3 * 3600)
        #expect(placeIndex.utcOffset(ofTimeZone: "Mars/Olympus_Mons", at: july) == nil)
    }
}
