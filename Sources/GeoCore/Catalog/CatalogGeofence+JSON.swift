public import JSONCodec

extension CatalogGeofence {
    /// Decodes a catalog record's value (see `Schemas/geofence.schema.json`): what a pin has at the top level (`id`,
    /// `lat`, `lon` and `radius` or a GeoJSON `shape`, and `title`, `metadata`, `dwellSeconds`, `approachSeconds`
    /// when wanted) and `tags`, a list of strings.
    ///
    /// The record's key is the geofence's id (compaction keeps its last record): `key`, when the record has one,
    /// must be the `id`. Members may come in any order; unknown members are ignored. Anything else returns a failure
    /// saying what is wrong, for the dead-letter topic.
    public static func decode(
        json bytes: UnsafeRawBufferPointer,
        key: String?
    ) -> Result<CatalogGeofence, DecodingFailure> {
        Result { () throws(DecodingFailure) in try decodeFields(bytes, key: key) }
    }

    /// The members of a catalog record; the case names are the JSON names.
    private enum Member: CaseIterable {
        case id, lat, lon, radius, shape, title, metadata, dwellSeconds, approachSeconds, tags

        /// The pin's member of the same name.
        var pinMember: PinFields.Member? {
            switch self {
            case .id: .id
            case .lat: .lat
            case .lon: .lon
            case .radius: .radius
            case .shape: .shape
            case .title: .title
            case .metadata: .metadata
            case .dwellSeconds: .dwellSeconds
            case .approachSeconds: .approachSeconds
            case .tags: nil
            }
        }
    }

    private static let members = JSONMemberTable<Member>()

    private static func decodeFields(
        _ bytes: UnsafeRawBufferPointer,
        key: String?
    ) throws(DecodingFailure)
        -> CatalogGeofence
    {
        var scanner = JSONScanner(bytes)
        try scanner.expectObject(of: "a geofence")
        var fields = PinFields()
        var tags = JSONField<[String]>.absent
        try scanner.readMembers(of: members, depth: 1) { member, scanner throws(DecodingFailure) in
            if let pinMember = member.pinMember {
                try fields.read(pinMember, from: &scanner)
            } else {
                tags = try scanner.tagsField()
            }
        }
        try scanner.expectEnd()
        let geofence = try fields.validated(in: nil)
        if let key, key != geofence.id {
            throw DecodingFailure.invalid("id", "must be the record's key ('\(key)'), not '\(geofence.id)'")
        }
        guard let catalogGeofence = CatalogGeofence(geofence: geofence, tags: try tags.required("tags")) else {
            throw DecodingFailure.invalid("tags", "must hold 1 to \(maximumTags) tags")
        }
        return catalogGeofence
    }
}

extension JSONScanner {
    /// Reads a list of tags (a catalog record's, a `subscribe` command's): 1 to ``CatalogGeofence/maximumTags``
    /// strings of 1 to ``CatalogGeofence/maximumTagLength`` bytes.
    mutating func tagsField() throws(DecodingFailure) -> JSONField<[String]> {
        if try consumeNull() { return .absent }
        guard try enterArray() else { return try invalidField("must be a list of strings") }
        var tags: [String] = []
        var first = true
        var problem: String?
        while try nextElement(first: first) {
            first = false
            switch try stringField(maximumBytes: CatalogGeofence.maximumTagLength) {
            case .present(let tag): tags.append(tag)
            case .absent: problem = problem ?? "must hold strings, not null"
            case .invalid(let requirement): problem = problem ?? "tag \(tags.count) \(requirement)"
            }
        }
        if let problem { return .invalid(problem) }
        guard !tags.isEmpty, tags.count <= CatalogGeofence.maximumTags else {
            return .invalid("must hold 1 to \(CatalogGeofence.maximumTags) tags")
        }
        return .present(tags)
    }
}
