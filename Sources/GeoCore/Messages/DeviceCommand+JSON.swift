public import JSONCodec

extension DeviceCommand {
    /// Decodes a command message from its JSON bytes (see `Schemas/command.*.schema.json`):
    /// `{"type":"track","deviceId":…,"pin":{"id","lat","lon","radius","title"?,"metadata"?}}`,
    /// `{"type":"untrack","deviceId":…,"pinId":…}`, `{"type":"untrackAll","deviceId":…}`, or
    /// `{"type":"subscribe","deviceId":…,"tags":[…]}` and `unsubscribe` alike, or
    /// `{"type":"setLimits","deviceId":…,"speedLimit"?:…,"silenceSeconds"?:…}` (a limit left out is the default).
    ///
    /// Members may come in any order; unknown members are ignored. Anything else returns a failure
    /// saying what is wrong.
    public static func decode(json bytes: UnsafeRawBufferPointer) -> Result<DeviceCommand, DecodingFailure> {
        Result { () throws(DecodingFailure) in try decodeFields(bytes) }
    }

    /// The members of a command message; the case names are the JSON names.
    private enum Member: CaseIterable {
        case type, deviceId, pin, pinId, tags, speedLimit, silenceSeconds
    }

    private static let members = JSONMemberTable<Member>()

    private static func decodeFields(_ bytes: UnsafeRawBufferPointer) throws(DecodingFailure) -> DeviceCommand {
        var scanner = JSONScanner(bytes)
        try scanner.expectObject(of: "a command")
        var type = JSONField<String>.absent
        var deviceId = JSONField<String>.absent
        var pin = JSONField<PinFields>.absent
        var pinId = JSONField<String>.absent
        var tags = JSONField<[String]>.absent
        var speedLimit = JSONField<Double>.absent
        var silenceSeconds = JSONField<Int>.absent
        try scanner.readMembers(of: members, depth: 1) { member, scanner throws(DecodingFailure) in
            switch member {
            case .type: type = try scanner.stringField()
            case .deviceId: deviceId = try scanner.stringField(maximumBytes: Position.maximumDeviceIdLength)
            case .pin: pin = try scanner.pinField()
            case .pinId: pinId = try scanner.stringField(maximumBytes: Pin.maximumIdLength)
            case .tags: tags = try scanner.tagsField()
            case .speedLimit: speedLimit = try scanner.numberField(in: DeviceCommand.speedLimitRange)
            case .silenceSeconds: silenceSeconds = try scanner.integerField(in: DeviceCommand.silenceRange)
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
        case "subscribe":
            return .subscribe(deviceId: device, tags: Array(Set(try tags.required("tags"))).sorted())
        case "unsubscribe":
            return .unsubscribe(deviceId: device, tags: Array(Set(try tags.required("tags"))).sorted())
        case "setLimits":
            return .setLimits(
                deviceId: device,
                speedLimit: try speedLimit.optional("speedLimit"),
                silentAfterSeconds: try silenceSeconds.optional("silenceSeconds")
            )
        default:
            throw DecodingFailure(
                .unknownCommand,
                "unknown command type '\(kind)' (expected track, untrack, untrackAll, subscribe, unsubscribe or "
                    + "setLimits)"
            )
        }
    }
}

/// The members of a `pin` object, each checked on its own; ``validated()`` makes the ``Pin``.
struct PinFields {
    /// The members of a `pin` object; the case names are the JSON names.
    enum Member: CaseIterable {
        case id, lat, lon, radius, shape, title, metadata, dwellSeconds, approachSeconds
    }

    static let members = JSONMemberTable<Member>()

    var id = JSONField<String>.absent
    var latitude = JSONField<Double>.absent
    var longitude = JSONField<Double>.absent
    var radius = JSONField<Double>.absent
    var shape = JSONField<PolygonShape>.absent
    var title = JSONField<String>.absent
    var metadata = JSONField<String>.absent
    var dwellSeconds = JSONField<Int>.absent
    var approachSeconds = JSONField<Int>.absent

    /// The pin the members make; `object` names them in failures (`pin` in a command, `pin.radius`; none at the top
    /// level of a catalog record, `radius`).
    func validated(in object: String? = "pin") throws(DecodingFailure) -> Pin {
        func name(_ member: String) -> String { object.map { "\($0).\(member)" } ?? member }
        let shape: PinShape
        if let polygon = try self.shape.optional(name("shape")) {
            guard case .absent = latitude, case .absent = longitude, case .absent = radius else {
                throw DecodingFailure.invalid(
                    object ?? "the geofence",
                    "has a shape and a centre or radius: give one or the other"
                )
            }
            shape = .polygon(polygon)
        } else {
            let center = Coordinate(
                latitude: try latitude.required(name("lat")),
                longitude: try longitude.required(name("lon"))
            )!
            shape = .circle(center: center, radius: try radius.required(name("radius")))
        }
        return Pin(
            id: try id.required(name("id")),
            shape: shape,
            title: try title.optional(name("title")),
            metadataJSON: try metadata.optional(name("metadata")),
            dwellSeconds: try dwellSeconds.optional(name("dwellSeconds")),
            approachSeconds: try approachSeconds.optional(name("approachSeconds"))
        )!
    }

    /// Reads one member's value into its field.
    mutating func read(_ member: Member, from scanner: inout JSONScanner) throws(DecodingFailure) {
        switch member {
        case .id: id = try scanner.stringField(maximumBytes: Pin.maximumIdLength)
        case .lat: latitude = try scanner.numberField(in: -90...90)
        case .lon: longitude = try scanner.numberField(in: -180...180)
        case .radius: radius = try scanner.numberField(in: Pin.radiusRange)
        case .shape: shape = try scanner.shapeField()
        case .title: title = try scanner.stringField()
        case .metadata: metadata = try scanner.metadataField()
        case .dwellSeconds: dwellSeconds = try scanner.integerField(in: Pin.dwellRange)
        case .approachSeconds: approachSeconds = try scanner.integerField(in: Pin.approachRange)
        }
    }
}

extension JSONScanner {
    /// Reads the `pin` member of a `track` command.
    mutating func pinField() throws(DecodingFailure) -> JSONField<PinFields> {
        if try consumeNull() { return .absent }
        guard try enterObject() else { return try invalidField("must be an object") }
        var fields = PinFields()
        try readMembers(of: PinFields.members, depth: 2) { member, scanner throws(DecodingFailure) in
            try fields.read(member, from: &scanner)
        }
        return .present(fields)
    }

    /// Reads a whole number within `range`.
    mutating func integerField(in range: ClosedRange<Int>) throws(DecodingFailure) -> JSONField<Int> {
        switch try numberField(in: Double(range.lowerBound)...Double(range.upperBound)) {
        case .absent: return .absent
        case .invalid(let requirement): return .invalid(requirement.replacingNumberWithWholeNumber)
        case .present(let value):
            guard value.rounded() == value else {
                return .invalid("must be a whole number from \(range.lowerBound) to \(range.upperBound)")
            }
            return .present(Int(value))
        }
    }

    /// The members of a GeoJSON geometry object that a shape needs; others (such as `bbox`) are ignored.
    private enum GeometryMember: CaseIterable {
        case type, coordinates
    }

    private static let geometryMembers = JSONMemberTable<GeometryMember>()

    /// Reads `shape`: a GeoJSON Polygon or MultiPolygon geometry, checked to be one geoworker can track.
    mutating func shapeField() throws(DecodingFailure) -> JSONField<PolygonShape> {
        if try consumeNull() { return .absent }
        guard try enterObject() else { return try invalidField("must be a GeoJSON Polygon or MultiPolygon object") }
        var type = JSONField<String>.absent
        var coordinates: GeoJSONCoordinates?
        try readMembers(of: Self.geometryMembers, depth: 3) { member, scanner throws(DecodingFailure) in
            switch member {
            case .type: type = try scanner.stringField()
            case .coordinates: coordinates = try scanner.geoJSONCoordinates(depth: 0)
            }
        }
        let isMulti: Bool
        switch type {
        case .present("Polygon"): isMulti = false
        case .present("MultiPolygon"): isMulti = true
        case .present(let other): return .invalid("must be a Polygon or MultiPolygon, not a \(other)")
        case .absent, .invalid: return .invalid("needs a type, Polygon or MultiPolygon")
        }
        guard let coordinates else { return .invalid("needs coordinates") }
        let polygons: [[[GeoJSONPosition]]]
        if isMulti {
            guard let multi = coordinates.multiPolygon else {
                return .invalid("coordinates must be polygons of rings of [lon, lat] positions")
            }
            polygons = multi
        } else {
            guard let polygon = coordinates.polygon else {
                return .invalid("coordinates must be rings of [lon, lat] positions")
            }
            polygons = [polygon]
        }
        do {
            return .present(try PolygonShape(positions: polygons, isMulti: isMulti))
        } catch {
            return .invalid(error.description)
        }
    }

    /// Reads nested arrays of numbers, as deep as a MultiPolygon's (positions in rings in polygons).
    ///
    /// An array that starts with a number is read as a position, without an array of its own: a catalog of a million
    /// shapes is read at every start, and an array for each of their vertices was most of the reading.
    private mutating func geoJSONCoordinates(depth: Int) throws(DecodingFailure) -> GeoJSONCoordinates {
        if let number = try readNumber() { return .number(number) }
        guard depth < 4, try enterArray() else {
            try skipValue(depth: depth + 3)
            return .invalid
        }
        var elements: [GeoJSONCoordinates] = []
        var first = true
        while try nextElement(first: first) {
            if first, let longitude = try readNumber() { return try positionRest(after: longitude, depth: depth) }
            first = false
            elements.append(try geoJSONCoordinates(depth: depth + 1))
        }
        return .array(elements)
    }

    /// The rest of an array whose first element was the number `longitude`: a position when it holds two or three
    /// numbers in all (an altitude is allowed and ignored, as RFC 7946 allows), else invalid.
    private mutating func positionRest(
        after longitude: Double,
        depth: Int
    ) throws(DecodingFailure) -> GeoJSONCoordinates {
        var latitude: Double?
        var count = 1
        var valid = true
        while try nextElement(first: false) {
            if valid, count < 3, let number = try readNumber() {
                if count == 1 { latitude = number }
                count += 1
            } else {
                valid = false
                try skipValue(depth: depth + 3)
            }
        }
        guard valid, let latitude else { return .invalid }
        return .position(GeoJSONPosition(longitude: longitude, latitude: latitude))
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
            json.pinDefinition(pin)
        case .untrack(let deviceId, let pinId):
            json.member("type", "untrack")
            json.member("deviceId", deviceId)
            json.member("pinId", pinId)
        case .untrackAll(let deviceId):
            json.member("type", "untrackAll")
            json.member("deviceId", deviceId)
        case .subscribe(let deviceId, let tags), .unsubscribe(let deviceId, let tags):
            if case .subscribe = self { json.member("type", "subscribe") } else { json.member("type", "unsubscribe") }
            json.member("deviceId", deviceId)
            json.key("tags")
            json.beginArray()
            for tag in tags { json.string(tag) }
            json.endArray()
        case .setLimits(let deviceId, let speedLimit, let silentAfterSeconds):
            json.member("type", "setLimits")
            json.member("deviceId", deviceId)
            if let speedLimit {
                json.key("speedLimit")
                json.number(speedLimit)
            }
            if let silentAfterSeconds {
                json.key("silenceSeconds")
                json.number(Double(silentAfterSeconds))
            }
        }
        json.endObject()
        return json.takeOutput()
    }
}

/// GeoJSON `coordinates` as read, before their type says how deep they must be.
enum GeoJSONCoordinates {
    case number(Double)
    /// An array of two or three numbers.
    case position(GeoJSONPosition)
    case array([GeoJSONCoordinates])
    /// Something that is neither a number nor an array, or nested too deep.
    case invalid

    var ring: [GeoJSONPosition]? {
        list { if case .position(let position) = $0 { position } else { nil } }
    }
    var polygon: [[GeoJSONPosition]]? { list(\.ring) }
    var multiPolygon: [[[GeoJSONPosition]]]? { list(\.polygon) }

    private func list<Element>(_ element: (GeoJSONCoordinates) -> Element?) -> [Element]? {
        guard case .array(let elements) = self else { return nil }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for item in elements {
            guard let value = element(item) else { return nil }
            result.append(value)
        }
        return result
    }
}

extension String {
    /// "must be a number from 1 to 60" -> "must be a whole number from 1 to 60".
    fileprivate var replacingNumberWithWholeNumber: String {
        hasPrefix("must be a number") ? "must be a whole number" + dropFirst("must be a number".count) : self
    }
}
