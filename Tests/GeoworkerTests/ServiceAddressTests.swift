import Addresses
import Foundation
import GeoCore
import Kafka
import TestSupport
import Testing
import Worker

/// The street address on a device card, from a real Nominatim (Monaco's extract, `scripts/nominatim.sh`), through
/// `geoworker run` with `address.provider` set.
@Suite("geoworker run: street addresses on the device card", .serialized, .timeLimit(.minutes(10)))
struct ServiceAddressTests {
    @Test(
        "a device in Monaco: its card shows the street address of its last fix, then the cached one, also on the page"
    )
    func monacoCard() async throws {
        let nominatim = try await NominatimServer()
        let bed = try ServiceTestBed()
        try await bed.produce(Self.ride("taxi-9", bed))
        let (child, port) = try await startServing(
            bed,
            ["--http-devices"],
            // What is checked is the answer: a loaded machine can keep a cold Nominatim seconds from its first one.
            environment: ["GEOWORKER_ADDRESS_PROVIDER": nominatim.baseURL, "GEOWORKER_ADDRESS_CARD_WAIT_MS": "30000"],
            untilConsumed: 4
        )
        let card = try await get(port, "devices/taxi-9")
        #expect(card.status == 200, "\(card.body)")
        let validation = try await ServiceTestBed.validate(["device-status\t" + card.body])
        #expect(validation.status == 0, "\(validation.output)\(validation.errors)")
        let address = try #require(try Self.object(card.body)["address"] as? [String: Any], "\(card.body)")
        #expect(address["status"] as? String == "current", "\(address)")
        #expect(address["found"] as? Bool == true)
        #expect(address["suburb"] as? String == "Monte-Carlo", "\(address)")
        #expect(address["city"] as? String == "Monaco" && address["countryCode"] as? String == "MC", "\(address)")
        #expect((address["road"] as? String)?.isEmpty == false, "\(address)")
        #expect((address["label"] as? String)?.contains("Monte-Carlo") == true, "\(address)")

        let again = try Self.object(try await get(port, "devices/taxi-9").body)["address"] as? [String: Any]
        #expect(again?["status"] as? String == "cached" && again?["stale"] as? Bool == false, "\(again ?? [:])")
        #expect(again?["label"] as? String == address["label"] as? String)
        #expect(nominatim.reverseRequests == 1, "one request for the card's bucket")
        let metrics = try await get(port, "metrics").body
        #expect(metrics.contains("geoworker_address_requests_total 1\n"), "\(metrics)")
        #expect(metrics.contains("geoworker_address_cache_hits_total 1\n"))

        // The page's card, in a real browser: the device found by its id.
        let browser = try await WebDriver.start()
        do {
            try await browser.open("http://127.0.0.1:\(port)/")
            try await browser.type("taxi-9\u{E007}", into: "#search")
            try await browser.waitUntil("taxi-9's card with its address") {
                try await browser.text("#card-address") != nil
            }
            let shown = try #require(try await browser.text("#card-address"))
            #expect(shown.hasPrefix(address["label"] as? String ?? "?"), "\(shown)")
            #expect(shown.contains("(cached"), "\(shown)")
            // OpenStreetMap's data, credited as its licence asks.
            #expect(shown.contains("© OpenStreetMap contributors"), "\(shown)")
        } catch {
            await browser.quit()
            throw error
        }
        await browser.quit()
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test("address settings that cannot work stop the start with the key named")
    func badSettings() async throws {
        let bed = try ServiceTestBed()
        for (variable, value, message) in [
            ("GEOWORKER_ADDRESS_PROVIDER", "nominatim.local", "address.provider must be an http:// or https:// URL"),
            ("GEOWORKER_ADDRESS_BUCKET_METERS", "0", "address.bucketMeters"),
            ("GEOWORKER_ADDRESS_DIALECT", "google", "address.dialect must be nominatim or photon"),
            // The public Nominatim's policy asks for a contact, which the default User-Agent does not have.
            (
                "GEOWORKER_ADDRESS_PROVIDER", "https://nominatim.openstreetmap.org",
                "address.userAgent must name your application and a contact"
            ),
        ] {
            let child = try bed.start([], environment: [variable: value])
            let ending = await child.waitForExit(timeout: .seconds(30))
            #expect(ending != .exited(0), "\(variable)=\(value)")
            #expect(child.errors.contains(message), "\(variable)=\(value): \(child.errors.suffix(500))")
        }
    }

    @Test("with address.prefetch on, fixes entering new buckets ask before anyone looks: a request each, cards cached")
    func prefetch() async throws {
        let nominatim = try await NominatimServer()
        let bed = try ServiceTestBed()
        // Two devices on one ride: the second enters no bucket the first did not.
        try await bed.produce(Self.ride("taxi-9", bed) + Self.ride("bus-2", bed))
        let buckets = Set(Self.fixes.map { AddressBucket(Coordinate(latitude: $0.0, longitude: $0.1)!, meters: 100) })
        let (child, port) = try await startServing(
            bed,
            ["--http-devices"],
            environment: [
                "GEOWORKER_ADDRESS_PROVIDER": nominatim.baseURL, "GEOWORKER_ADDRESS_PREFETCH": "true",
                "GEOWORKER_ADDRESS_MAX_REQUESTS_PER_SECOND": "20",
            ],
            untilConsumed: 2 * Self.fixes.count
        )
        try await waitUntil("an answer for every bucket the fixes entered") {
            try await get(port, "metrics").body.contains(
                #"geoworker_address_answers_total{result="address"} \#(buckets.count)"# + "\n"
            )
        }
        #expect(nominatim.reverseRequests == buckets.count, "one request per bucket, none asked twice")
        let address = try Self.object(try await get(port, "devices/bus-2").body)["address"] as? [String: Any]
        #expect(address?["status"] as? String == "cached" && address?["suburb"] as? String == "Monte-Carlo")
        #expect(nominatim.reverseRequests == buckets.count)
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    @Test("the nearby answer gives each device the street address of its last fix, and follows its schema")
    func nearby() async throws {
        let nominatim = try await NominatimServer()
        let bed = try ServiceTestBed()
        try await bed.produce(Self.ride("taxi-9", bed) + Self.ride("bus-2", bed).prefix(2))
        let (child, port) = try await startServing(
            bed,
            ["--http-devices"],
            environment: ["GEOWORKER_ADDRESS_PROVIDER": nominatim.baseURL, "GEOWORKER_ADDRESS_CARD_WAIT_MS": "30000"],
            untilConsumed: Self.fixes.count + 2
        )
        let answer = try await get(port, "devices/nearby?lat=43.7375&lon=7.4250&radius=2000")
        #expect(answer.status == 200, "\(answer.body)")
        let validation = try await ServiceTestBed.validate(["device-nearby\t" + answer.body])
        #expect(validation.status == 0, "\(validation.output)\(validation.errors)")
        let devices = try #require(try Self.object(answer.body)["devices"] as? [[String: Any]], "\(answer.body)")
        #expect(Set(devices.compactMap { $0["deviceId"] as? String }) == ["taxi-9", "bus-2"])
        for device in devices {
            let address = device["address"] as? [String: Any]
            #expect(address?["status"] as? String == "current", "\(device)")
            #expect(address?["countryCode"] as? String == "MC", "\(device)")
            #expect((address?["label"] as? String)?.isEmpty == false, "\(device)")
        }
        #expect(nominatim.reverseRequests == 2, "one request per bucket of a last fix")
        child.send(SIGTERM)
        #expect(await child.waitForExit(timeout: .seconds(20)) == .exited(0))
    }

    /// A taxi's climb from the harbour to the casino's square, a fix every 30 s.
    static let fixes = [(43.7351, 7.4214), (43.7368, 7.4240), (43.7390, 7.4268), (43.73965, 7.42770)]

    /// ``fixes`` as `device`'s positions.
    static func ride(_ device: String, _ bed: ServiceTestBed) -> [ProducerRecord] {
        let start: Int64 = 1_795_000_000_000
        return fixes.enumerated().map { index, fix in
            let time = start + Int64(index) * 30_000
            return ProducerRecord(
                topic: bed.topics.positions,
                key: Array(device.utf8),
                value: Array(
                    #"{"deviceId":"\#(device)","lat":\#(fix.0),"lon":\#(fix.1),"timestamp":\#(time),"accuracy":10}"#
                        .utf8
                ),
                timestampMilliseconds: time
            )
        }
    }

    private static func object(_ json: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
    }
}
