import Testing

@testable import geoworker

/// The line an operator reads for each event (`geoworker tail`, the demo).
@Suite("Event lines", .timeLimit(.minutes(5)))
struct EventLineTests {
    func line(_ json: String) -> String { EventLine.format(Array(json.utf8)) }

    @Test("each event type reads as a sentence: time, device, type, what happened")
    func types() {
        #expect(
            line(
                #"{"type":"geofence.entered","time":"2026-11-21T08:37:00Z","subject":"truck-17","data":{"pin":{"id":"exit-23","title":"Exit 23"},"distanceMeters":41.6,"initial":true}}"#
            )
                == "2026-11-21T08:37:00Z  truck-17    geofence.entered      Exit 23 (exit-23), 42 m from its centre, already inside when tracked"
        )
        #expect(
            line(
                #"{"type":"geofence.exited","time":"t","subject":"van","data":{"pin":{"id":"depot"},"distanceMeters":250}}"#
            ) == "t  van         geofence.exited       depot, 250 m from its centre"
        )
        #expect(
            line(
                #"{"type":"country.changed","time":"t","subject":"truck-17","data":{"from":"FR","to":"CH","countryName":"Switzerland"}}"#
            ) == "t  truck-17    country.changed       FR -> CH (Switzerland)"
        )
        #expect(
            line(#"{"type":"country.changed","time":"t","subject":"d","data":{"from":null,"to":"BE"}}"#)
                == "t  d           country.changed       (first fix) -> BE (BE)"
        )
        #expect(
            line(
                #"{"type":"language.suggested","time":"t","subject":"d","data":{"countryCode":"CH","language":"fr-CH","alternatives":["de-CH","it-CH"],"basis":"device-language"}}"#
            ) == "t  d           language.suggested    fr-CH for CH (device-language; also de-CH, it-CH)"
        )
    }

    @Test("dwell, crossing and approach read as sentences too, polygons measured from their edge")
    func fleetTypes() {
        #expect(
            line(
                #"{"type":"geofence.entered","time":"t","subject":"van","data":{"pin":{"id":"yard","kind":"polygon"},"distanceMeters":12.4,"initial":false}}"#
            ) == "t  van         geofence.entered      yard, 12 m from its edge"
        )
        #expect(
            line(
                #"{"type":"geofence.dwelled","time":"t","subject":"van","data":{"pin":{"id":"yard","title":"Yard"},"insideSince":"2026-11-21T08:06:00.000Z","dwellSeconds":185.5}}"#
            ) == "t  van         geofence.dwelled      Yard (yard), inside for 3 min 6 s (since 08:06:00)"
        )
        #expect(
            line(
                #"{"type":"geofence.crossed","time":"t","subject":"car","data":{"pin":{"id":"gantry"},"from":{"timestamp":"2026-11-21T08:14:00.000Z"},"to":{"timestamp":"2026-11-21T08:15:00.000Z"}}}"#
            )
                == "t  car         geofence.crossed      gantry, passed through between the fixes of 08:14:00 and 08:15:00"
        )
        #expect(
            line(
                #"{"type":"geofence.approaching","time":"t","subject":"truck","data":{"pin":{"id":"depot"},"etaSeconds":45,"distanceMeters":12500,"speedMetersPerSecond":22.4,"basis":"derived-speed"}}"#
            ) == "t  truck       geofence.approaching  depot, ETA 45 s, 13 km to its edge at 22 m/s (derived-speed)"
        )
    }

    @Test("a value that is not a geoworker event says so, with its start")
    func notAnEvent() {
        #expect(line("hello") == "(not a geoworker event: hello)")
        #expect(line(#"{"no":"type"}"#).hasPrefix("(not a geoworker event: "))
    }
}
