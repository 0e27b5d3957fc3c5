import Foundation
import TestSupport
import Testing

/// The dispatcher's question on the operations port: which held devices are nearest a point, how far, how fast.
@Suite("geoworker run: GET /devices/nearby", .serialized, .timeLimit(.minutes(10)))
struct ServiceNearbyTests {
    @Test("the devices within the radius, nearest first, with distance, last fix, speed and ETA; bad parameters 400")
    func nearby() async throws {
        let bed = try ServiceTestBed()
        // Twelve devices end side by side along 7.96° E, 111 m apart from 48.565° N northwards, each having
        // driven 2.45 km in its last 10 s (a derived speed of about 245 m/s).
        let traffic = BorderTraffic(devices: 12, positionsPerDevice: 10, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())
        let (child, port) = try await startServing(bed, ["--http-devices"], untilConsumed: 120)

        let answer = try await get(port, "devices/nearby?lat=48.565&lon=7.96&radius=250&limit=10")
        #expect(answer.status == 200, "\(answer.body)")
        let validation = try await ServiceTestBed.validate(["device-nearby\t" + answer.body])
        #expect(validation.status == 0, "\(validation.output)\(validation.errors)")
        var devices = try Self.devices(answer.body)
        #expect(devices.map { $0["deviceId"] as? String } == ["device-0", "device-1", "device-2"])
        let distances = devices.compactMap { $0["distanceMeters"] as? Double }
        #expect(distances == [0, 111, 222], "\(distances)")
        let speed = try #require(devices[1]["speedMetersPerSecond"] as? Double)
        #expect(abs(speed - 245) < 5, "derived from the last two fixes: \(speed)")
        #expect(devices[1]["etaSeconds"] as? Double == (111 / speed).rounded())
        #expect((devices[2]["lastFix"] as? [String: Any])?["timestamp"] as? String == "2026-11-21T22:28:10.000Z")
        #expect(devices.allSatisfy { $0["status"] as? String == "current" })

        devices = try Self.devices(try await get(port, "devices/nearby?lat=48.5703&lon=7.96&radius=5000&limit=4").body)
        #expect(
            devices.map { $0["deviceId"] as? String } == ["device-5", "device-6", "device-4", "device-7"],
            "the four nearest of twelve, from a point between device-5 and device-6, nearer device-5"
        )
        devices = try Self.devices(try await get(port, "devices/nearby?lat=48.565&lon=7.90").body)
        #expect(devices.count == 10, "5 km and 10 devices by default: \(devices.count)")
        #expect(try Self.devices(try await get(port, "devices/nearby?lat=0&lon=0").body).isEmpty)

        for bad in [
            "lon=7.96", "lat=91&lon=7.96", "lat=48&lon=7&radius=0", "lat=48&lon=7&radius=x", "lat=48&lon=7&limit=0",
        ] {
            let refused = try await get(port, "devices/nearby?" + bad)
            #expect(refused.status == 400, "\(bad): \(refused.body)")
        }
        child.send(SIGTERM)
        _ = await child.waitForExit(timeout: .seconds(20))
    }

    private static func devices(_ json: String) throws -> [[String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        return try #require(object["devices"] as? [[String: Any]])
    }
}
