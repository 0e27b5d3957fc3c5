import Foundation
import TestSupport
import Testing

/// The places' settings as an operator gives them to `geoworker run`: environment variables and flags.
@Suite("geoworker run: places settings", .timeLimit(.minutes(10)))
struct ServicePlacesSettingsTests {
    @Test("GEOWORKER_TRACKER_DISABLED_EVENTS switches kinds off; GEOWORKER_PLACES_ENABLED=false turns places off")
    func switches() async throws {
        let bed = try ServiceTestBed()
        let traffic = BorderTraffic(devices: 3, positionsPerDevice: 10, topics: bed.topics)
        try await bed.produce(traffic.commands() + traffic.positions())

        let withoutZones = try bed.start(
            ["--until-caught-up"],
            environment: ["GEOWORKER_TRACKER_DISABLED_EVENTS": "timezone.changed,language.suggested"]
        )
        #expect(
            await withoutZones.waitForExit(timeout: .seconds(120)) == .exited(0),
            "\(withoutZones.errors.suffix(2000))"
        )
        var types = Set(try await bed.events().map(\.type))
        #expect(types.contains("region.changed") && types.contains("country.changed"), "\(types)")
        #expect(!types.contains("timezone.changed") && !types.contains("language.suggested"), "\(types)")

        let bedOff = try ServiceTestBed()
        let trafficOff = BorderTraffic(devices: 3, positionsPerDevice: 10, topics: bedOff.topics)
        try await bedOff.produce(trafficOff.commands() + trafficOff.positions())
        let off = try bedOff.start(["--until-caught-up"], environment: ["GEOWORKER_PLACES_ENABLED": "false"])
        #expect(await off.waitForExit(timeout: .seconds(120)) == .exited(0), "\(off.errors.suffix(2000))")
        #expect(off.errors.contains("places are off"))
        types = Set(try await bedOff.events().map(\.type))
        #expect(types.contains("country.changed") && !types.contains("region.changed"), "\(types)")
    }

    @Test("a places index that cannot be read stops the start, naming the file")
    func unreadableIndex() async throws {
        let bed = try ServiceTestBed()
        let child = try bed.start(["--until-caught-up", "--places-index", "/nonexistent/places.idx"])
        #expect(await child.waitForExit(timeout: .seconds(60)) == .exited(1))
        #expect(child.errors.contains("/nonexistent/places.idx"), "\(child.errors.suffix(2000))")
    }
}
