import JSONCodec

/// Writes ``DeviceEvent``s as CloudEvents 1.0 in structured mode (JSON), as the CloudEvents Kafka
/// protocol binding carries them: the whole event is the message value, with ``contentType`` as the
/// message's `content-type` header and the device id as its key.
///
/// ```json
/// {"specversion":"1.0","id":"positions:3:1042:0","source":"/geoworker","type":"geofence.entered",
///  "subject":"truck-17","time":"2026-11-21T10:00:00.000Z","datacontenttype":"application/json",
///  "data":{"deviceId":"truck-17","pin":{…},"position":{…},"distanceMeters":12.5,"initial":false}}
/// ```
public struct CloudEventEncoder: Sendable {
    /// The `content-type` header of a structured-mode CloudEvent.
    public static let contentType = "application/cloudevents+json; charset=UTF-8"

    /// The CloudEvents `source` (a URI reference naming this producer).
    ///
    /// Default: `/geoworker`.
    public let source: String
    /// The envelope's fixed text between the event's id and its subject, by ``DeviceEvent/typeNumber``: the source and
    /// the type.
    ///
    /// Fixed for a tracker's life, so written once rather than member by member for every event.
    private let sourceAndType: [[UInt8]]

    public init(source: String = "/geoworker") {
        self.source = source
        var quotedSource = JSONWriter()
        quotedSource.string(source)
        let quoted = quotedSource.takeOutput()
        sourceAndType = DeviceEvent.types.map { type in
            Array(#","source":"#.utf8) + quoted + Array(#","type":"\#(type)","subject":"#.utf8)
        }
    }

    /// The envelope's text before the event's id, and between its time and the data's device id.
    private static let opening = Array(#"{"specversion":"1.0","id":"#.utf8)
    private static let contentTypeAndData = Array(#","datacontenttype":"application/json","data":{"deviceId":"#.utf8)

    /// The event as JSON bytes.
    public func encode(_ event: DeviceEvent) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        append(event, to: &output)
        return output
    }

    /// Appends the event's JSON to `output`.
    public func append(_ event: DeviceEvent, to output: inout [UInt8]) {
        // The writer takes the buffer over (and gives it back at the end) so that appending never
        // copies it: `output` must not share its storage meanwhile.
        var json = JSONWriter(output: output)
        output = []
        // {"specversion":"1.0","id":…,"source":…,"type":…,"subject":…,"time":…,"datacontenttype":"application/json",
        // "data":{"deviceId":…
        json.fixed(Self.opening)
        json.string(event.id)
        json.fixed(sourceAndType[event.typeNumber])
        json.string(event.deviceId)
        json.key("time")
        json.timestamp(event.time)
        json.fixed(Self.contentTypeAndData)
        json.string(event.deviceId)
        switch event.payload {
        case .geofenceEntered(let crossing), .geofenceExited(let crossing):
            json.pinAndPosition(crossing.pin, crossing.position, catalogTags: event.catalogTags)
            json.key("distanceMeters")
            json.number((crossing.distanceMeters * 100).rounded() / 100)
            json.key("initial")
            json.bool(crossing.initial)
        case .geofenceDwelled(let stay):
            json.pinAndPosition(stay.pin, stay.position, catalogTags: event.catalogTags)
            json.key("insideSince")
            json.timestamp(stay.insideSince)
            json.key("dwellSeconds")
            json.number(stay.dwellSeconds)
        case .geofenceCrossed(let passage):
            json.key("pin")
            json.eventPin(passage.pin, catalogTags: event.catalogTags)
            json.key("from")
            json.fix(passage.from)
            json.key("to")
            json.fix(passage.to)
        case .geofenceApproaching(let approach):
            json.pinAndPosition(approach.pin, approach.position, catalogTags: event.catalogTags)
            json.key("etaSeconds")
            json.number((approach.etaSeconds * 10).rounded() / 10)
            json.key("distanceMeters")
            json.number((approach.distanceMeters * 100).rounded() / 100)
            json.key("speedMetersPerSecond")
            json.number((approach.speedMetersPerSecond * 100).rounded() / 100)
            json.member("basis", approach.basis.rawValue)
        case .countryChanged(let change):
            json.key("from")
            if let from = change.from { json.string(from) } else { json.null() }
            json.member("to", change.to)
            json.member("countryName", change.countryName)
            json.key("position")
            json.fix(change.position)
            if change.region != nil || change.locality != nil {
                json.key("region")
                json.region(change.region)
                json.key("locality")
                json.locality(change.locality)
            }
        case .regionChanged(let change):
            json.key("from")
            json.region(change.from)
            json.key("to")
            json.region(change.to)
            json.key("countryCode")
            json.optionalString(change.countryCode)
            json.key("position")
            json.fix(change.position)
        case .timeZoneChanged(let change):
            json.key("from")
            json.zone(change.from)
            json.key("to")
            json.zone(change.to)
            json.key("position")
            json.fix(change.position)
        case .tripStarted(let trip):
            json.key("start")
            json.fix(trip.start)
            json.key("position")
            json.fix(trip.position)
            json.key("distanceMeters")
            json.number((trip.distanceMeters * 10).rounded() / 10)
        case .tripEnded(let trip):
            json.key("start")
            json.fix(trip.start)
            json.key("end")
            json.fix(trip.end)
            json.key("distanceMeters")
            json.number((trip.distanceMeters * 10).rounded() / 10)
            json.key("durationSeconds")
            json.number(trip.durationSeconds)
            json.key("topSpeedMetersPerSecond")
            json.number((trip.topSpeedMetersPerSecond * 100).rounded() / 100)
            json.member("reason", trip.reason.rawValue)
            json.key("position")
            json.fix(trip.position)
        case .speedExceeded(let report), .speedNormal(let report):
            json.key("limitMetersPerSecond")
            json.number(report.limitMetersPerSecond)
            json.key("speedMetersPerSecond")
            json.number((report.speedMetersPerSecond * 100).rounded() / 100)
            json.member("basis", report.basis.rawValue)
            json.key("topSpeedMetersPerSecond")
            json.number((report.topSpeedMetersPerSecond * 100).rounded() / 100)
            json.key("since")
            json.timestamp(report.since)
            json.key("durationSeconds")
            json.number(report.durationSeconds)
            json.key("position")
            json.fix(report.position)
        case .deviceSilent(let silence):
            json.key("lastFix")
            json.fix(silence.lastFix)
            json.key("silentAfterSeconds")
            json.number(Double(silence.silentAfterSeconds))
        case .deviceResumed(let resumption):
            json.key("lastFix")
            json.fix(resumption.lastFix)
            json.key("position")
            json.fix(resumption.position)
            json.key("quietSeconds")
            json.number(resumption.quietSeconds)
        case .languageSuggested(let suggestion):
            json.member("countryCode", suggestion.countryCode)
            json.member("language", suggestion.language)
            json.key("alternatives")
            json.beginArray()
            for alternative in suggestion.alternatives { json.string(alternative) }
            json.endArray()
            json.member("basis", suggestion.basis.rawValue)
        }
        json.endObject()
        json.endObject()
        output = json.takeOutput()
    }
}
