import Foundation
import GeoCore
import Testing

/// Countries made of a few axis-aligned rectangles, enough to test the tracker's country rules:
/// AA is lon 0..1, BB is lon 1..2 (sharing the border at lon 1), both lat 0..1; everything else is sea.
struct RectangleCountries: CountryResolver {
    struct Rectangle {
        let code: String
        let latitudes: ClosedRange<Double>
        let longitudes: Range<Double>
    }

    let rectangles = [
        Rectangle(code: "AA", latitudes: 0...1, longitudes: 0..<1),
        Rectangle(code: "BB", latitudes: 0...1, longitudes: 1..<2),
    ]

    func countryCode(at coordinate: Coordinate) -> String? {
        rectangles.first { $0.latitudes.contains(coordinate.latitude) && $0.longitudes.contains(coordinate.longitude) }?
            .code
    }

    /// The rectangle's code when the whole disc lies in it (distances on the sphere's degree lengths).
    func countryCode(at coordinate: Coordinate, within radius: Double) -> String? {
        guard let code = countryCode(at: coordinate),
            let rectangle = rectangles.first(where: { $0.code == code })
        else { return nil }
        let metresPerDegree = Coordinate.earthRadius * Double.pi / 180
        let east = metresPerDegree * cos(coordinate.latitude * Double.pi / 180)
        let margins = [
            (coordinate.latitude - rectangle.latitudes.lowerBound) * metresPerDegree,
            (rectangle.latitudes.upperBound - coordinate.latitude) * metresPerDegree,
            (coordinate.longitude - rectangle.longitudes.lowerBound) * east,
            (rectangle.longitudes.upperBound - coordinate.longitude) * east,
        ]
        return margins.allSatisfy { $0 > radius } ? code : nil
    }

    func countryName(for code: String) -> String { "Country \(code)" }
}

/// Suggests the device's first language when the country "speaks" it, else the country's own.
struct TableLanguages: LanguageAdvisor {
    let spoken = ["AA": ["fr-AA", "de-AA"], "BB": ["nl-BB"]]

    func suggestion(for countryCode: String, deviceLanguages: [String]) -> LanguageSuggestion? {
        guard let languages = spoken[countryCode] else { return nil }
        if let match = languages.first(where: { tag in deviceLanguages.contains { tag.hasPrefix($0.prefix(2)) } }) {
            return LanguageSuggestion(
                countryCode: countryCode,
                language: match,
                alternatives: languages.filter { $0 != match },
                basis: .deviceLanguage
            )
        }
        return LanguageSuggestion(
            countryCode: countryCode,
            language: languages[0],
            alternatives: Array(languages.dropFirst()),
            basis: .officialLanguage
        )
    }
}

/// One device fed message by message, as the pipeline would: each message gets the next offset.
struct DeviceScenario {
    var tracker: DeviceTracker
    var state: DeviceState
    var offset: Int64 = 0
    var outcomes: [DeviceTracker.Outcome] = []

    init(
        configuration: TrackerConfiguration = TrackerConfiguration(),
        deviceId: String = "truck-17",
        catalog: FleetCatalog? = nil
    ) {
        tracker = DeviceTracker(
            configuration: configuration,
            countries: RectangleCountries(),
            languages: TableLanguages(),
            catalog: catalog
        )
        state = DeviceState(deviceId: deviceId)
    }

    /// Applies a position `north` metres north of `origin` (and `east` metres east) at `time` seconds.
    mutating func move(
        north: Double = 0,
        east: Double = 0,
        from origin: Coordinate = DeviceScenario.pinCenter,
        at time: Int64,
        accuracy: Double? = 5,
        speed: Double? = nil,
        heading: Double? = nil,
        languages: [String] = []
    ) -> [DeviceEvent] {
        let coordinate = origin.offset(north: north, east: east)
        let position = Position(
            deviceId: state.deviceId,
            coordinate: coordinate,
            timestamp: DeviceScenario.start + time * 1000,
            accuracy: accuracy,
            speed: speed,
            heading: heading,
            languages: languages
        )
        var events: [DeviceEvent] = []
        outcomes.append(tracker.apply(position, origin: nextOrigin(), to: &state, events: &events))
        return events
    }

    mutating func command(_ command: DeviceCommand) -> [DeviceEvent] {
        var events: [DeviceEvent] = []
        outcomes.append(tracker.apply(command, origin: nextOrigin(), to: &state, events: &events))
        return events
    }

    mutating func track(_ pin: Pin) -> [DeviceEvent] {
        command(.track(deviceId: state.deviceId, pin: pin))
    }

    private mutating func nextOrigin() -> MessageOrigin {
        defer { offset += 1 }
        return MessageOrigin(topic: "positions", partition: 0, offset: offset, timestamp: DeviceScenario.start + offset)
    }

    static let start: Int64 = 1_795_000_000_000
    static let pinCenter = Coordinate(latitude: 10, longitude: 10)!  // at sea: no country events
    static let pin = Pin(
        id: "exit-23",
        center: pinCenter,
        radius: 200,
        title: "Exit 23",
        metadataJSON: #"{"road":"E40"}"#
    )!
}

extension DeviceScenario {
    /// The state as the store or the changelog would give it back to another instance: encoded and decoded.
    mutating func restart() throws {
        state = try DeviceStateEncoding.decode(DeviceStateEncoding.encode(state))
    }

    /// A square polygon pin of `half` metres each way around `center`, with square holes of `holes` half-sizes
    /// around the same centre (GeoJSON rings: counter-clockwise outside, clockwise holes, closed).
    static func squarePin(
        id: String = "depot",
        center: Coordinate = pinCenter,
        half: Double = 200,
        holes: [Double] = [],
        dwellSeconds: Int? = nil,
        approachSeconds: Int? = nil
    ) -> Pin {
        func ring(_ half: Double, clockwise: Bool) -> [[Double]] {
            var corners = [(-half, -half), (-half, half), (half, half), (half, -half)]  // (north, east)
            if clockwise { corners.reverse() }
            var ring = corners.map { corner -> [Double] in
                let point = center.offset(north: corner.0, east: corner.1)
                return [point.longitude, point.latitude]
            }
            ring.append(ring[0])
            return ring
        }
        let rings = [ring(half, clockwise: false)] + holes.map { ring($0, clockwise: true) }
        let shape = try! PolygonShape(polygons: [rings], isMulti: false)
        return Pin(id: id, shape: .polygon(shape), dwellSeconds: dwellSeconds, approachSeconds: approachSeconds)!
    }
}

extension Coordinate {
    /// The coordinate `north` and `east` metres away (flat approximation, fine at test distances).
    func offset(north: Double, east: Double) -> Coordinate {
        let metresPerDegree = Coordinate.earthRadius * Double.pi / 180
        let cosine = _cosine(latitude * Double.pi / 180)
        return Coordinate(
            latitude: latitude + north / metresPerDegree,
            longitude: longitude + east / (metresPerDegree * cosine)
        )!
    }
}

/// cos without Foundation (the test module imports only GeoCore and Testing).
private func _cosine(_ x: Double) -> Double {
    // Taylor series is plenty for test latitudes near the equator (|x| < 0.1 rad).
    let x2 = x * x
    return 1 - x2 / 2 + x2 * x2 / 24 - x2 * x2 * x2 / 720
}

extension DeviceEvent {
    /// A compact description for assertions: `entered exit-23 initial`, `country AA->BB`, `language fr-AA`.
    var summary: String {
        switch payload {
        case .geofenceEntered(let crossing): "entered \(crossing.pin.id)\(crossing.initial ? " initial" : "")"
        case .geofenceExited(let crossing): "exited \(crossing.pin.id)\(crossing.initial ? " initial" : "")"
        case .countryChanged(let change): "country \(change.from ?? "nil")->\(change.to)"
        case .languageSuggested(let suggestion): "language \(suggestion.language)"
        case .geofenceDwelled(let stay): "dwelled \(stay.pin.id) \(Int(stay.dwellSeconds))s"
        case .geofenceCrossed(let passage): "crossed \(passage.pin.id)"
        case .geofenceApproaching(let approach):
            "approaching \(approach.pin.id) eta \(Int(approach.etaSeconds.rounded()))s \(approach.basis.rawValue)"
        case .regionChanged(let change): "region \(change.from?.code ?? "nil")->\(change.to?.code ?? "nil")"
        case .timeZoneChanged(let change): "zone \(change.from?.identifier ?? "nil")->\(change.to.identifier)"
        case .tripStarted(let trip): "trip started \(Int(trip.distanceMeters.rounded()))m"
        case .tripEnded(let trip):
            "trip ended \(trip.reason.rawValue) \(Int(trip.distanceMeters.rounded()))m \(Int(trip.durationSeconds))s"
        case .speedExceeded(let report):
            "speed exceeded \(Int(report.speedMetersPerSecond.rounded()))>\(Int(report.limitMetersPerSecond))"
        case .speedNormal(let report): "speed normal after \(Int(report.durationSeconds))s"
        case .deviceSilent(let silence): "silent after \(silence.silentAfterSeconds)s"
        case .deviceResumed(let resumption): "resumed after \(Int(resumption.quietSeconds))s"
        }
    }
}

/// Each payload's content when the payload is of that case, nil otherwise: a test unwraps it with
/// `try #require`, so a payload of another case fails the test rather than ending it early.
extension DeviceEvent.Payload {
    var entered: GeofenceCrossing? {
        if case .geofenceEntered(let crossing) = self { return crossing }
        return nil
    }

    var exited: GeofenceCrossing? {
        if case .geofenceExited(let crossing) = self { return crossing }
        return nil
    }

    var countryChange: CountryChange? {
        if case .countryChanged(let change) = self { return change }
        return nil
    }

    var languageSuggestion: LanguageSuggestion? {
        if case .languageSuggested(let suggestion) = self { return suggestion }
        return nil
    }

    var approach: GeofenceApproach? {
        if case .geofenceApproaching(let approach) = self { return approach }
        return nil
    }

    var tripEnd: TripEnd? {
        if case .tripEnded(let trip) = self { return trip }
        return nil
    }

    var dwelled: GeofenceDwell? {
        if case .geofenceDwelled(let stay) = self { return stay }
        return nil
    }

    var crossed: GeofencePassage? {
        if case .geofenceCrossed(let passage) = self { return passage }
        return nil
    }
}
