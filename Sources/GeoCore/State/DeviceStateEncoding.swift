/// The binary form of a ``DeviceState``: one device's whole state (pins with their announced states, last fix, country,
/// languages, input partition and applied offsets) in a few dozen bytes.
///
/// The state store keeps it as each device's row and the changelog carries it as each device's record, the same bytes,
/// so a restore stores what it reads without decoding and encoding again.
///
/// Layout, version 5 (integers are LEB128 varints unless sized; doubles are their IEEE 754 bits, little-endian;
/// a string is its UTF-8 length as a varint, then its bytes):
/// ```
/// u8 version (5) · string deviceId · varint inputPartition · varint positions offset + 1 · varint commands
/// offset + 1 · u8 flags (1 last fix, 2 its accuracy, 4 country, 8 country candidate) · [f64 lat · f64 lon ·
/// zigzag varint timestamp · [f64 accuracy]] · [string country] · [string candidate] · varint candidate fixes ·
/// varint language count · strings · varint pin count · pins · places
/// pin: string id · u8 flags (1 title, 2 metadata, 4 polygon, 8 multi-polygon, 16 dwell, 32 approach,
/// 64 since) · u8 state (bits 0-1 announced membership, 4 dwell announced, 8 approach announced, 16 approach
/// arrival) ·
/// circle: f64 lat · f64 lon · f64 radius | polygon: varint polygon count · per polygon varint ring count ·
/// per ring varint vertex count · per vertex f64 lon · f64 lat (rings without their closing vertex) ·
/// [varint dwell seconds] · [varint approach seconds] · [zigzag varint since] · [zigzag varint approach arrival] ·
/// [string title] · [string metadata]
/// places: u8 flags (1 region, 2 region candidate, 4 time zone, 8 time-zone candidate) · [string region code ·
/// string region name · u8 region source (0 polygon, 1 nearest place, 2 GeoNames admin-1) · string region local
/// name (empty when the same as its name)] · [string region candidate] · varint region candidate fixes · [string
/// time zone] · [string time-zone candidate] · varint time-zone candidate fixes
/// ```
/// Version 6 is version 5 followed by the device's standing with the fleet's catalog, and is written only for a device
/// that has one (``DeviceState/catalog``): every other device is written in version 5, so that a geoworker of before
/// the catalog still reads the states of users who do not use it.
/// ```
/// catalog: varint subscription count · strings (sorted, each once) · u8 flags (1 decided at) · [zigzag varint
/// decided at] · varint visit count · visits (by id, sorted, each once)
/// visit: string geofence id · u8 state (bits 0-1 membership, 4 dwell announced, 8 approach announced, 16 approach
/// arrival, 32 since) · [zigzag varint since] · [zigzag varint approach arrival]
/// ```
/// Version 7 is version 5 followed by the sections the device has, and is written only for a device with trips,
/// speeding or limits of its own (``DeviceState/activity``); the others are written in version 5 or 6 as before.
/// Version 8 is version 7 with a third section, and is written only for a device heard later than its last fix's time
/// (``DeviceState/lastHeard``).
/// ```
/// u8 sections (1 catalog, 2 activity, 4 heard: version 8 only, and always there) · [catalog] · [activity] · [varint
/// heard: milliseconds after the last fix's time]
/// activity: varint flags (1 anchor, 2 trip, 4 speeding, 8 speed limit, 16 silent after, 32 trip announced,
/// 64 speeding announced, 128 speeding heading, 256 silence announced) · [fix anchor] · [fix trip start · fix trip last move · f64 trip
/// distance · f64 trip top speed] · [zigzag varint speeding since · f64 speeding top speed · [f64 heading]] · [f64
/// speed limit] · [varint silent after seconds]
/// fix: f64 lat · f64 lon · zigzag varint timestamp · u8 (1 accuracy) · [f64 accuracy]
/// ```
/// Version 4 is version 5 without the region's local name and with sources 0 and 1 only (read with the local name
/// its name: a region saved by an earlier geoworker keeps the name it was announced with until the device's region
/// next changes). Version 3 is version 4 without places (read as none announced: a device's first fix after an
/// upgrade announces its region and time zone). Version 2 is version 3 without the approach arrival (its state bit is never set).
/// Version 1 (circles only, no per-pin times) differs in its pins: string id · f64 lat · f64 lon · f64 radius ·
/// u8 flags (1 title, 2 metadata) · u8 announced membership · [string title] · [string metadata]. Stores and
/// changelogs written by earlier versions are read as they are and written back in this one when the device next
/// changes.
///
/// A new version gets a new number and a decoder beside the others; a reader meets a version it does not know
/// (written by a newer geoworker) with an error that says so, never with a guess.
public enum DeviceStateEncoding {
    /// The newest version this build writes: for a device heard later than its last fix's time.
    public static let version: UInt8 = 8
    /// The version this build writes for a device with activity, heard on time (``versionWithCatalog`` or
    /// ``versionWithoutCatalog`` without either).
    public static let versionWithActivity: UInt8 = 7
    /// The version this build writes for a device with catalog state and no activity.
    public static let versionWithCatalog: UInt8 = 6
    /// The version this build writes for a device without catalog state.
    public static let versionWithoutCatalog: UInt8 = 5
    /// The versions this build reads.
    public static let readableVersions: ClosedRange<UInt8> = 1...8

    /// The state's bytes.
    public static func encode(_ state: DeviceState) -> [UInt8] {
        var writer = Writer()
        writer.bytes.reserveCapacity(64 + state.pins.count * 48)
        let hasActivity = state.hasActivity
        let heardLate = state.lastFix.flatMap { fix in state.lastHeard.map { $0 - fix.timestamp } }.flatMap {
            $0 > 0 ? UInt64($0) : nil
        }
        let hasSections = hasActivity || heardLate != nil
        writer.byte(
            heardLate != nil
                ? version
                : hasActivity ? versionWithActivity : state.catalog == nil ? versionWithoutCatalog : versionWithCatalog
        )
        writer.string(state.deviceId)
        writer.varint(UInt64(UInt32(bitPattern: state.inputPartition)))
        writer.varint(UInt64(bitPattern: state.appliedOffsets.positions &+ 1))
        writer.varint(UInt64(bitPattern: state.appliedOffsets.commands &+ 1))
        let fix = state.lastFix
        var flags: UInt8 = 0
        if fix != nil { flags |= Flag.lastFix }
        if fix?.accuracy != nil { flags |= Flag.accuracy }
        if state.country != nil { flags |= Flag.country }
        if state.countryCandidate != nil { flags |= Flag.candidate }
        writer.byte(flags)
        if let fix {
            writer.double(fix.coordinate.latitude)
            writer.double(fix.coordinate.longitude)
            writer.varint(zigzag(fix.timestamp))
            if let accuracy = fix.accuracy { writer.double(accuracy) }
        }
        if let country = state.country { writer.string(country) }
        if let candidate = state.countryCandidate { writer.string(candidate) }
        writer.varint(UInt64(max(0, state.countryCandidateFixes)))
        writer.varint(UInt64(state.languages.count))
        for language in state.languages { writer.string(language) }
        writer.varint(UInt64(state.pins.count))
        for tracked in state.pins { writer.pin(tracked) }
        writer.places(state.places)
        if hasSections {
            writer.byte(
                (state.catalog == nil ? 0 : Section.catalog) | (hasActivity ? Section.activity : 0)
                    | (heardLate == nil ? 0 : Section.heard)
            )
            if let catalog = state.catalog { writer.catalog(catalog) }
            if hasActivity { writer.activity(state.activity) }
            if let heardLate { writer.varint(heardLate) }
        } else if let catalog = state.catalog {
            writer.catalog(catalog)
        }
        return writer.bytes
    }

    /// The state these bytes hold.
    ///
    /// - Throws: ``DeviceStateDecodingError`` when the bytes are cut short, carry a value no version writes
    ///   (an invalid coordinate, a pin that could not be tracked, bytes after the end), or come from a version
    ///   this build does not know.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(DeviceStateDecodingError) -> DeviceState {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte("version")
        guard readableVersions.contains(version) else {
            throw DeviceStateDecodingError(
                "encoding version \(version), and this geoworker reads versions \(readableVersions.lowerBound) to "
                    + "\(readableVersions.upperBound) only (written by a newer geoworker?)"
            )
        }
        let deviceId = try reader.string("device id")
        guard !deviceId.isEmpty else { throw DeviceStateDecodingError("the device id is empty") }
        guard let partition = Int32(exactly: try reader.varint("input partition")) else {
            throw DeviceStateDecodingError("the input partition is out of range")
        }
        let positions = try reader.offset("positions offset")
        let commands = try reader.offset("commands offset")
        let flags = try reader.byte("flags")
        guard flags & ~(Flag.lastFix | Flag.accuracy | Flag.country | Flag.candidate) == 0,
            flags & Flag.lastFix != 0 || flags & Flag.accuracy == 0
        else { throw DeviceStateDecodingError("unknown flags \(flags)") }
        var fix: Fix?
        if flags & Flag.lastFix != 0 {
            let latitude = try reader.double("latitude")
            let longitude = try reader.double("longitude")
            guard let coordinate = Coordinate(latitude: latitude, longitude: longitude) else {
                throw DeviceStateDecodingError("the last fix (\(latitude), \(longitude)) is not a coordinate")
            }
            let timestamp = unzigzag(try reader.varint("timestamp"))
            let accuracy = flags & Flag.accuracy != 0 ? try reader.double("accuracy") : nil
            if let accuracy, !(accuracy.isFinite && accuracy >= 0) {
                throw DeviceStateDecodingError("the last fix's accuracy \(accuracy) is not a distance")
            }
            fix = Fix(coordinate: coordinate, timestamp: timestamp, accuracy: accuracy)
        }
        let country = flags & Flag.country != 0 ? try reader.string("country") : nil
        let candidate = flags & Flag.candidate != 0 ? try reader.string("country candidate") : nil
        guard let candidateFixes = Int(exactly: try reader.varint("candidate fixes")) else {
            throw DeviceStateDecodingError("the candidate fix count is out of range")
        }
        let languageCount = try reader.count("languages", smallestItem: 1)
        var languages: [String] = []
        languages.reserveCapacity(languageCount)
        for _ in 0..<languageCount { languages.append(try reader.string("language")) }
        let pinCount = try reader.count("pins", smallestItem: 27)
        var pins: [TrackedPin] = []
        pins.reserveCapacity(pinCount)
        for _ in 0..<pinCount {
            pins.append(version == 1 ? try reader.pinVersion1() : try reader.pin(hasArrival: version >= 3))
        }
        let places = version >= 4 ? try reader.places(version: version) : DevicePlaces()
        let sections =
            version >= 7 ? try reader.byte("sections") : version == 6 ? Section.catalog : 0
        let known = Section.catalog | Section.activity | (version >= 8 ? Section.heard : 0)
        guard sections & ~known == 0 else { throw DeviceStateDecodingError("unknown sections \(sections)") }
        guard (version >= 8) == (sections & Section.heard != 0) else {
            throw DeviceStateDecodingError("version \(version) without the section it is written for")
        }
        let catalog = sections & Section.catalog != 0 ? try reader.catalog() : nil
        let activity = sections & Section.activity != 0 ? try reader.activity() : DeviceActivity()
        var lastHeard: Int64?
        if sections & Section.heard != 0 {
            let after = try reader.varint("heard")
            guard let fix, after > 0, after <= UInt64(Int64.max - max(0, fix.timestamp)) else {
                let last = fix.map { "at \($0.timestamp)" } ?? "it lacks"
                throw DeviceStateDecodingError("heard \(after) ms after a last fix \(last)")
            }
            lastHeard = fix.timestamp + Int64(after)
        }
        guard reader.isAtEnd else {
            throw DeviceStateDecodingError("\(reader.remaining) bytes after the end of the state")
        }
        return DeviceState(
            deviceId: deviceId,
            pins: pins,
            lastFix: fix,
            languages: languages,
            country: country,
            countryCandidate: candidate,
            countryCandidateFixes: candidateFixes,
            places: places,
            catalog: catalog,
            activity: activity,
            lastHeard: lastHeard,
            inputPartition: partition,
            appliedOffsets: AppliedOffsets(positions: positions, commands: commands)
        )
    }

    /// The applied offsets of the state these bytes hold, read from their head without decoding the rest: what a
    /// restore compares to tell which of two states of one device is the newer.
    ///
    /// - Throws: ``DeviceStateDecodingError`` when the head is cut short or the version is one this build does
    ///   not read.
    public static func appliedOffsets(
        in bytes: UnsafeRawBufferPointer
    ) throws(DeviceStateDecodingError) -> AppliedOffsets {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte("version")
        guard readableVersions.contains(version) else {
            throw DeviceStateDecodingError("encoding version \(version), which this geoworker does not read")
        }
        _ = try reader.string("device id")
        _ = try reader.varint("input partition")
        return AppliedOffsets(
            positions: try reader.offset("positions offset"),
            commands: try reader.offset("commands offset")
        )
    }

    /// The state these bytes hold; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ bytes: [UInt8]) throws(DeviceStateDecodingError) -> DeviceState {
        let decoded = bytes.withUnsafeBytes { buffer in
            Result { () throws(DeviceStateDecodingError) in try decode(buffer) }
        }
        return try decoded.get()
    }

    /// The sections after a version 7 state's places.
    enum Section {
        static let catalog: UInt8 = 1
        static let activity: UInt8 = 2
        static let heard: UInt8 = 4
    }

    enum Flag {
        static let lastFix: UInt8 = 1
        static let accuracy: UInt8 = 2
        static let country: UInt8 = 4
        static let candidate: UInt8 = 8
    }

    /// The flags of a pin.
    enum PinFlag {
        static let title: UInt8 = 1
        static let metadata: UInt8 = 2
        static let polygon: UInt8 = 4
        static let multiPolygon: UInt8 = 8
        static let dwell: UInt8 = 16
        static let approach: UInt8 = 32
        static let since: UInt8 = 64
        static let all: UInt8 = 127
    }

    /// The state byte of a catalog visit: the pin's state bits, and one for its `since`.
    enum VisitState {
        static let since: UInt8 = 32
        static let all: UInt8 =
            PinState.membership | PinState.dwellAnnounced | PinState.approachAnnounced | PinState.approachArrival
            | since
    }

    /// The flags of a device's places.
    enum PlacesFlag {
        static let region: UInt8 = 1
        static let regionCandidate: UInt8 = 2
        static let timeZone: UInt8 = 4
        static let timeZoneCandidate: UInt8 = 8
        static let all: UInt8 = 15
    }

    /// The state byte of a pin: its membership in the low two bits, then what has been announced.
    enum PinState {
        static let membership: UInt8 = 3
        static let dwellAnnounced: UInt8 = 4
        static let approachAnnounced: UInt8 = 8
        /// Version 3: an approach arrival time follows the pin's `since`.
        static let approachArrival: UInt8 = 16
    }

    static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }
}

extension PlaceRegion.Source {
    /// The source's byte in a state's places (0 polygon, 1 nearest place, 2 GeoNames admin-1).
    var encodedByte: UInt8 {
        switch self {
        case .polygon: 0
        case .nearestPlace: 1
        case .geonamesAdmin1: 2
        }
    }

    /// The source a state's byte stands for, nil for a byte `version` never wrote (GeoNames' regions came with 5).
    init?(encodedByte: UInt8, version: UInt8) {
        switch encodedByte {
        case 0: self = .polygon
        case 1: self = .nearestPlace
        case 2 where version >= 5: self = .geonamesAdmin1
        default: return nil
        }
    }
}
