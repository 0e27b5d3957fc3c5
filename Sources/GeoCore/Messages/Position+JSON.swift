public import JSONCodec

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Position {
    /// Device ids longer than this many UTF-8 bytes are refused.
    public static let maximumDeviceIdLength = 256
    /// The most preferred languages a position may list.
    public static let maximumLanguages = 16

    /// Decodes a position message from its JSON bytes (see `Schemas/position.schema.json`).
    ///
    /// Any valid JSON layout is accepted (whitespace, member order, escapes, exponents); unknown members
    /// are ignored. Anything else returns a failure saying what is wrong.
    public static func decode(json bytes: UnsafeRawBufferPointer) -> Result<Position, DecodingFailure> {
        var recent = RecentLanguages()
        return decode(json: bytes, recent: &recent)
    }

    /// Decodes a position message, handing out the languages list of `recent` when the message lists the same
    /// text, and remembering the message's list otherwise (see ``RecentLanguages``).
    static func decode(
        json bytes: UnsafeRawBufferPointer,
        recent: inout RecentLanguages
    ) -> Result<Position, DecodingFailure> {
        Result { () throws(DecodingFailure) in try decodeFields(bytes, recent: &recent) }
    }

    /// The members of a position message; the case names are the JSON names.
    private enum Member: CaseIterable {
        case deviceId, lat, lon, timestamp, accuracy, speed, heading, languages
    }

    private static let members = JSONMemberTable<Member>()

    private static func decodeFields(
        _ bytes: UnsafeRawBufferPointer,
        recent: inout RecentLanguages
    ) throws(DecodingFailure) -> Position {
        var scanner = JSONScanner(bytes)
        try scanner.expectObject(of: "a position")
        var deviceId = JSONField<String>.absent
        var latitude = JSONField<Double>.absent
        var longitude = JSONField<Double>.absent
        var timestamp = JSONField<Int64>.absent
        var accuracy = JSONField<Double>.absent
        var speed = JSONField<Double>.absent
        var heading = JSONField<Double>.absent
        var languages = JSONField<[String]>.absent
        try scanner.readMembers(of: members, depth: 1) { member, scanner throws(DecodingFailure) in
            switch member {
            case .deviceId: deviceId = try scanner.stringField(maximumBytes: maximumDeviceIdLength)
            case .lat: latitude = try scanner.numberField(in: -90...90)
            case .lon: longitude = try scanner.numberField(in: -180...180)
            case .timestamp: timestamp = try scanner.timestampField()
            case .accuracy: accuracy = try scanner.numberField(in: 0...Double.greatestFiniteMagnitude)
            case .speed: speed = try scanner.numberField(in: 0...Double.greatestFiniteMagnitude)
            case .heading: heading = try scanner.numberField(in: 0...360)
            case .languages: languages = try scanner.languagesField(recent: &recent)
            }
        }
        try scanner.expectEnd()
        // The text is valid JSON: now say what is wrong with its content, in a fixed order.
        let id = try deviceId.required("deviceId")
        let coordinate = Coordinate(latitude: try latitude.required("lat"), longitude: try longitude.required("lon"))!
        return Position(
            deviceId: id,
            coordinate: coordinate,
            timestamp: try timestamp.required("timestamp"),
            accuracy: try accuracy.optional("accuracy"),
            speed: try speed.optional("speed"),
            heading: try heading.optional("heading"),
            languages: try languages.optional("languages") ?? []
        )
    }
}

extension JSONScanner {
    /// Opens the message's top-level object, or fails saying why there is none.
    mutating func expectObject(of what: String) throws(DecodingFailure) {
        guard try !enterObject() else { return }
        // Tell invalid JSON from valid JSON that is not an object.
        try skipValue()
        try expectEnd()
        throw DecodingFailure(.notAnObject, "\(what) must be a JSON object")
    }

    /// Reads `languages`: an array of BCP 47 tags (letters, digits and hyphens, at most 35 characters).
    ///
    /// The same text as `recent`'s gives `recent`'s array; another valid list becomes `recent`.
    mutating func languagesField(recent: inout RecentLanguages) throws(DecodingFailure) -> JSONField<[String]> {
        if try consumeNull() { return .absent }
        skipWhitespace()
        let start = position
        if let tags = recent.tags(atStartOf: UnsafeRawBufferPointer(rebasing: bytes[start...])) {
            skip(recent.text.count)
            return .present(tags)
        }
        let field = try languagesArray()
        if case .present(let tags) = field {
            recent.remember(tags, text: UnsafeRawBufferPointer(rebasing: bytes[start..<position]))
        }
        return field
    }

    /// Reads the array of `languages`.
    private mutating func languagesArray() throws(DecodingFailure) -> JSONField<[String]> {
        guard try enterArray() else { return try invalidField("must be an array of BCP 47 language tags") }
        var tags: [String] = []
        // Devices list a few: one allocation rather than one per growth.
        tags.reserveCapacity(4)
        var problem: String?
        var first = true
        while try nextElement(first: first) {
            first = false
            guard let raw = try readRawString() else {
                problem = problem ?? "must hold only strings (BCP 47 language tags), not \(describeNextValue())"
                try skipValue(depth: 2)
                continue
            }
            let tag: String? = withContent(of: raw) { content in
                guard (1...35).contains(content.count), content.first != UInt8(ascii: "-"),
                    content.allSatisfy({ $0 == UInt8(ascii: "-") || ($0 < 0x80 && isASCIIAlphanumeric($0)) })
                else { return nil }
                return String(decoding: content, as: UTF8.self)
            }
            if let tag {
                tags.append(tag)
            } else {
                problem = problem ?? "must hold BCP 47 language tags (letters, digits, hyphens; such as fr-BE)"
            }
        }
        if let problem { return .invalid(problem) }
        guard tags.count <= Position.maximumLanguages else {
            return .invalid("must list at most \(Position.maximumLanguages) languages")
        }
        return .present(tags)
    }
}

private func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
    (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
}
