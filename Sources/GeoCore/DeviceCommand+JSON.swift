extension DeviceCommand {
    /// Decodes a command message from its JSON bytes (see `Schemas/command.*.schema.json`):
    /// `{"type":"track","deviceId":…,"pin":{"id","lat","lon","radius","title"?,"metadata"?}}`,
    /// `{"type":"untrack","deviceId":…,"pinId":…}` or `{"type":"untrackAll","deviceId":…}`.
    ///
    /// Members may come in any order; unknown members are ignored. Anything else returns a failure
    /// saying what is wrong.
    public static func decode(json bytes: UnsafeRawBufferPointer) -> Result<DeviceCommand, DecodingFailure> {
        Result { () throws(DecodingFailure) in try decodeFields(bytes) }
    }

    /// The members of a command message; the case names are the JSON names.
    private enum Member: CaseIterable {
        case type, deviceId, pin, pinId
    }

    private static let members = JSONMemberTable<Member>()

    private static func decodeFields(_ bytes: UnsafeRawBufferPointer) throws(DecodingFailure) -> DeviceCommand {
        var scanner = JSONScanner(bytes)
        try scanner.expectObject(of: "a command")
        var type = JSONField<String>.absent
        var deviceId = JSONField<String>.absent
        var pin = JSONField<PinFields>.absent
        var pinId = JSONField<String>.absent
        var first = true
        while let key = try scanner.nextKey(first: first) {
            first = false
            switch members.member(key, in: scanner) {
            case .type?: type = try scanner.stringField()
            case .deviceId?: deviceId = try scanner.stringField(maximumBytes: Position.maximumDeviceIdLength)
            case .pin?: pin = try scanner.pinField()
            case .pinId?: pinId = try scanner.stringField(maximumBytes: Pin.maximumIdLength)
            case nil: try scanner.skipValue(depth: 1)
            }
        }
        try scanner.expectEnd()

        let kind = try type.required("type")
        let device = try deviceId.required("deviceId")
        switch kind {
        case "track":
            return .track(deviceId: device, pin: try pin.required("pin").validated())
        case "untrack":
            return .untrack(deviceId: device, pinId: try pinId.required("pinId"))
        case "untrackAll":
            return .untrackAll(deviceId: device)
        default:
            throw DecodingFailure(
                .unknownCommand,
                "unknown command type '\(kind)' (expected track, untrack or untrackAll)"
            )
        }
    }
}

/// The members of a `pin` object, each checked on its own; ``validated()`` makes the ``Pin``.
struct PinFields {
    /// The members of a `pin` object; the case names are the JSON names.
    enum Member: CaseIterable {
        case id, lat, lon, radius, title, metadata
    }

    static let members = JSONMemberTable<Member>()

    var id = JSONField<String>.absent
    var latitude = JSONField<Double>.absent
    var longitude = JSONField<Double>.absent
    var radius = JSONField<Double>.absent
    var title = JSONField<String>.absent
    var metadata = JSONField<String>.absent

    func validated() throws(DecodingFailure) -> Pin {
        let center = Coordinate(
            latitude: try latitude.required("pin.lat"),
            longitude: try longitude.required("pin.lon")
        )!
        return Pin(
            id: try id.required("pin.id"),
            center: center,
            radius: try radius.required("pin.radius"),
            title: try title.optional("pin.title"),
            metadataJSON: try metadata.optional("pin.metadata")
        )!
    }
}

extension JSONScanner {
    /// Reads the `pin` member of a `track` command.
    mutating func pinField() throws(DecodingFailure) -> JSONField<PinFields> {
        if try consumeNull() { return .absent }
        guard try enterObject() else { return try invalidField("must be an object") }
        var fields = PinFields()
        var first = true
        while let key = try nextKey(first: first) {
            first = false
            switch PinFields.members.member(key, in: self) {
            case .id?: fields.id = try stringField(maximumBytes: Pin.maximumIdLength)
            case .lat?: fields.latitude = try numberField(in: -90...90)
            case .lon?: fields.longitude = try numberField(in: -180...180)
            case .radius?: fields.radius = try numberField(in: Pin.radiusRange)
            case .title?: fields.title = try stringField()
            case .metadata?: fields.metadata = try metadataField()
            case nil: try skipValue(depth: 2)
            }
        }
        return .present(fields)
    }

    /// Reads `metadata`: any JSON object, kept as its text so that events carry it unchanged.
    mutating func metadataField() throws(DecodingFailure) -> JSONField<String> {
        if try consumeNull() { return .absent }
        let start = valueStart()
        guard try enterObject() else { return try invalidField("must be an object") }
        var first = true
        while try nextKey(first: first) != nil {
            first = false
            try skipValue(depth: 3)
        }
        guard position - start <= Self.maximumMetadataBytes else {
            return .invalid("must be at most \(Self.maximumMetadataBytes) bytes of JSON")
        }
        return .present(text(from: start))
    }

    /// Metadata is stored with every pin and copied into its events: keep it small.
    static let maximumMetadataBytes = 4096
}

extension DeviceCommand {
    /// The command as the JSON message ``decode(json:)`` reads (for tools that produce commands).
    public var json: [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        switch self {
        case .track(let deviceId, let pin):
            json.member("type", "track")
            json.member("deviceId", deviceId)
            json.key("pin")
            json.pin(pin)
        case .untrack(let deviceId, let pinId):
            json.member("type", "untrack")
            json.member("deviceId", deviceId)
            json.member("pinId", pinId)
        case .untrackAll(let deviceId):
            json.member("type", "untrackAll")
            json.member("deviceId", deviceId)
        }
        json.endObject()
        return json.output
    }
}
