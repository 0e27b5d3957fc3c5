/// The binary form of a ``DeviceState``: one device's whole state (pins with their announced states, last fix, country,
/// languages, input partition and applied offsets) in a few dozen bytes.
///
/// The state store keeps it as each device's row and the changelog carries it as each device's record, the same bytes,
/// so a restore stores what it reads without decoding and encoding again.
///
/// Layout, version 3 (integers are LEB128 varints unless sized; doubles are their IEEE 754 bits, little-endian;
/// a string is its UTF-8 length as a varint, then its bytes):
/// ```
/// u8 version (3) · string deviceId · varint inputPartition · varint positions offset + 1 · varint commands
/// offset + 1 · u8 flags (1 last fix, 2 its accuracy, 4 country, 8 country candidate) · [f64 lat · f64 lon ·
/// zigzag varint timestamp · [f64 accuracy]] · [string country] · [string candidate] · varint candidate fixes ·
/// varint language count · strings · varint pin count · pins
/// pin: string id · u8 flags (1 title, 2 metadata, 4 polygon, 8 multi-polygon, 16 dwell, 32 approach,
/// 64 since) · u8 state (bits 0-1 announced membership, 4 dwell announced, 8 approach announced, 16 approach
/// arrival) ·
/// circle: f64 lat · f64 lon · f64 radius | polygon: varint polygon count · per polygon varint ring count ·
/// per ring varint vertex count · per vertex f64 lon · f64 lat (rings without their closing vertex) ·
/// [varint dwell seconds] · [varint approach seconds] · [zigzag varint since] · [zigzag varint approach arrival] ·
/// [string title] · [string metadata]
/// ```
/// Version 2 is version 3 without the approach arrival (its state bit is never set).
/// Version 1 (circles only, no per-pin times) differs in its pins: string id · f64 lat · f64 lon · f64 radius ·
/// u8 flags (1 title, 2 metadata) · u8 announced membership · [string title] · [string metadata]. Stores and
/// changelogs written by versions 1 and 2 are read as they are and written back as version 3 when the device
/// next changes.
///
/// A new version gets a new number and a decoder beside the others; a reader meets a version it does not know
/// (written by a newer geoworker) with an error that says so, never with a guess.
public enum DeviceStateEncoding {
    /// The version this build writes.
    public static let version: UInt8 = 3
    /// The versions this build reads.
    public static let readableVersions: ClosedRange<UInt8> = 1...3

    /// The state's bytes.
    public static func encode(_ state: DeviceState) -> [UInt8] {
        var writer = Writer()
        writer.bytes.reserveCapacity(64 + state.pins.count * 48)
        writer.byte(version)
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
            inputPartition: partition,
            appliedOffsets: AppliedOffsets(positions: positions, commands: commands)
        )
    }

    /// The state these bytes hold; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ bytes: [UInt8]) throws(DeviceStateDecodingError) -> DeviceState {
        let decoded = bytes.withUnsafeBytes { buffer in
            Result { () throws(DeviceStateDecodingError) in try decode(buffer) }
        }
        return try decoded.get()
    }

    private enum Flag {
        static let lastFix: UInt8 = 1
        static let accuracy: UInt8 = 2
        static let country: UInt8 = 4
        static let candidate: UInt8 = 8
    }

    /// The flags of a pin.
    private enum PinFlag {
        static let title: UInt8 = 1
        static let metadata: UInt8 = 2
        static let polygon: UInt8 = 4
        static let multiPolygon: UInt8 = 8
        static let dwell: UInt8 = 16
        static let approach: UInt8 = 32
        static let since: UInt8 = 64
        static let all: UInt8 = 127
    }

    /// The state byte of a pin: its membership in the low two bits, then what has been announced.
    private enum PinState {
        static let membership: UInt8 = 3
        static let dwellAnnounced: UInt8 = 4
        static let approachAnnounced: UInt8 = 8
        /// Version 3: an approach arrival time follows the pin's `since`.
        static let approachArrival: UInt8 = 16
    }

    private static func zigzag(_ value: Int64) -> UInt64 {
        UInt64(bitPattern: (value << 1) ^ (value >> 63))
    }

    private static func unzigzag(_ value: UInt64) -> Int64 {
        Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func pin(_ tracked: TrackedPin) {
            let pin = tracked.pin
            string(pin.id)
            var flags: UInt8 = 0
            if pin.title != nil { flags |= PinFlag.title }
            if pin.metadataJSON != nil { flags |= PinFlag.metadata }
            if case .polygon(let polygon) = pin.shape {
                flags |= PinFlag.polygon
                if polygon.isMulti { flags |= PinFlag.multiPolygon }
            }
            if pin.dwellSeconds != nil { flags |= PinFlag.dwell }
            if pin.approachSeconds != nil { flags |= PinFlag.approach }
            if tracked.since != nil { flags |= PinFlag.since }
            byte(flags)
            byte(
                tracked.membership.rawValue | (tracked.dwellAnnounced ? PinState.dwellAnnounced : 0)
                    | (tracked.approachAnnounced ? PinState.approachAnnounced : 0)
                    | (tracked.approachArrival != nil ? PinState.approachArrival : 0)
            )
            switch pin.shape {
            case .circle(let center, let radius):
                double(center.latitude)
                double(center.longitude)
                double(radius)
            case .polygon(let polygon):
                varint(UInt64(polygon.polygonEnds.count))
                var ring = 0
                for polygonEnd in polygon.polygonEnds {
                    varint(UInt64(Int(polygonEnd) - ring))
                    while ring < Int(polygonEnd) {
                        let range = polygon.ringRange(ring)
                        varint(UInt64(range.count))
                        for index in range {
                            double(polygon.vertices[2 * index])
                            double(polygon.vertices[2 * index + 1])
                        }
                        ring += 1
                    }
                }
            }
            if let dwell = pin.dwellSeconds { varint(UInt64(dwell)) }
            if let approach = pin.approachSeconds { varint(UInt64(approach)) }
            if let since = tracked.since { varint(zigzag(since)) }
            if let arrival = tracked.approachArrival { varint(zigzag(arrival)) }
            if let title = pin.title { string(title) }
            if let metadata = pin.metadataJSON { string(metadata) }
        }

        mutating func byte(_ value: UInt8) { bytes.append(value) }

        mutating func varint(_ value: UInt64) {
            var value = value
            while value >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
                value >>= 7
            }
            bytes.append(UInt8(value))
        }

        mutating func double(_ value: Double) {
            var bits = value.bitPattern
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: bits))
                bits >>= 8
            }
        }

        mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                varint(UInt64(utf8.count))
                bytes.append(contentsOf: utf8)
            }
        }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        var isAtEnd: Bool { position == bytes.count }
        var remaining: Int { bytes.count - position }

        mutating func byte(_ what: String) throws(DeviceStateDecodingError) -> UInt8 {
            guard position < bytes.count else { throw DeviceStateDecodingError("cut short before the \(what)") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func varint(_ what: String) throws(DeviceStateDecodingError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte(what)
                guard shift < 64, shift < 63 || byte <= 1 else {
                    throw DeviceStateDecodingError("the \(what) is too long a number")
                }
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 {
                    // One encoding per value: a restore stores the bytes it reads, as the writer would.
                    guard byte != 0 || shift == 0 else { throw DeviceStateDecodingError("the \(what) is not minimal") }
                    return value
                }
                shift += 7
            }
        }

        /// An offset written plus one (0 for none, -1).
        mutating func offset(_ what: String) throws(DeviceStateDecodingError) -> Int64 {
            let stored = try varint(what)
            guard stored <= UInt64(Int64.max) else { throw DeviceStateDecodingError("the \(what) is out of range") }
            return Int64(stored) - 1
        }

        /// An item count, checked against the bytes left (each item takes at least `smallestItem`), so that
        /// damaged bytes cannot ask for a huge allocation.
        mutating func count(_ what: String, smallestItem: Int) throws(DeviceStateDecodingError) -> Int {
            let count = try varint("\(what) count")
            guard count <= UInt64(remaining / smallestItem) else {
                throw DeviceStateDecodingError("\(count) \(what) cannot fit in the \(remaining) bytes left")
            }
            return Int(count)
        }

        mutating func double(_ what: String) throws(DeviceStateDecodingError) -> Double {
            guard remaining >= 8 else { throw DeviceStateDecodingError("cut short in the \(what)") }
            var bits: UInt64 = 0
            for index in (0..<8).reversed() { bits = bits << 8 | UInt64(bytes[position + index]) }
            position += 8
            return Double(bitPattern: bits)
        }

        mutating func string(_ what: String) throws(DeviceStateDecodingError) -> String {
            let length = try varint("\(what) length")
            guard length <= UInt64(remaining) else { throw DeviceStateDecodingError("cut short in the \(what)") }
            let utf8 = UnsafeRawBufferPointer(rebasing: bytes[position..<position + Int(length)])
            position += Int(length)
            guard let text = String(validating: utf8, as: UTF8.self) else {
                throw DeviceStateDecodingError("the \(what) is not UTF-8")
            }
            return text
        }

        /// A version 2 or 3 pin; `hasArrival` for version 3, which may carry an approach arrival.
        mutating func pin(hasArrival: Bool) throws(DeviceStateDecodingError) -> TrackedPin {
            let id = try string("pin id")
            let flags = try byte("pin flags")
            guard flags & ~PinFlag.all == 0, flags & PinFlag.polygon != 0 || flags & PinFlag.multiPolygon == 0 else {
                throw DeviceStateDecodingError("pin \(id) has unknown flags \(flags)")
            }
            let stateByte = try byte("pin state")
            let known =
                PinState.membership | PinState.dwellAnnounced | PinState.approachAnnounced
                | (hasArrival ? PinState.approachArrival : 0)
            guard stateByte & ~known == 0, let membership = Membership(rawValue: stateByte & PinState.membership)
            else { throw DeviceStateDecodingError("pin \(id) has an unknown state \(stateByte)") }
            let shape: PinShape
            if flags & PinFlag.polygon != 0 {
                shape = .polygon(try polygon(id: id, isMulti: flags & PinFlag.multiPolygon != 0))
            } else {
                let latitude = try double("pin latitude")
                let longitude = try double("pin longitude")
                let radius = try double("pin radius")
                guard let center = Coordinate(latitude: latitude, longitude: longitude) else {
                    throw DeviceStateDecodingError("pin \(id) is not a pin geoworker tracks")
                }
                shape = .circle(center: center, radius: radius)
            }
            let dwell = flags & PinFlag.dwell != 0 ? try smallInteger("pin dwell") : nil
            let approach = flags & PinFlag.approach != 0 ? try smallInteger("pin approach") : nil
            let since = flags & PinFlag.since != 0 ? unzigzag(try varint("pin since")) : nil
            let arrival =
                stateByte & PinState.approachArrival != 0 ? unzigzag(try varint("pin approach arrival")) : nil
            let title = flags & PinFlag.title != 0 ? try string("pin title") : nil
            let metadata = flags & PinFlag.metadata != 0 ? try string("pin metadata") : nil
            guard
                let pin = Pin(
                    id: id,
                    shape: shape,
                    title: title,
                    metadataJSON: metadata,
                    dwellSeconds: dwell,
                    approachSeconds: approach
                )
            else { throw DeviceStateDecodingError("pin \(id) is not a pin geoworker tracks") }
            return TrackedPin(
                pin: pin,
                membership: membership,
                since: since,
                dwellAnnounced: stateByte & PinState.dwellAnnounced != 0,
                approachAnnounced: stateByte & PinState.approachAnnounced != 0,
                approachArrival: arrival
            )
        }

        private mutating func polygon(id: String, isMulti: Bool) throws(DeviceStateDecodingError) -> PolygonShape {
            // Each ring takes at least a count byte and three vertices of 16 bytes.
            let polygonCount = try count("pin \(id) polygons", smallestItem: 49)
            var vertices: [Double] = []
            var ringEnds: [Int32] = []
            var polygonEnds: [Int32] = []
            for _ in 0..<polygonCount {
                let ringCount = try count("pin \(id) rings", smallestItem: 49)
                for _ in 0..<ringCount {
                    let vertexCount = try count("pin \(id) vertices", smallestItem: 16)
                    vertices.reserveCapacity(vertices.count + 2 * vertexCount)
                    for _ in 0..<vertexCount {
                        vertices.append(try double("pin \(id) longitude"))
                        vertices.append(try double("pin \(id) latitude"))
                    }
                    ringEnds.append(Int32(vertices.count / 2))
                }
                polygonEnds.append(Int32(ringEnds.count))
            }
            guard
                let shape = PolygonShape(
                    vertices: vertices,
                    ringEnds: ringEnds,
                    polygonEnds: polygonEnds,
                    isMulti: isMulti
                ), isMulti || polygonCount == 1
            else { throw DeviceStateDecodingError("pin \(id) has a shape geoworker does not track") }
            return shape
        }

        /// A varint that fits an `Int`.
        private mutating func smallInteger(_ what: String) throws(DeviceStateDecodingError) -> Int {
            guard let value = Int(exactly: try varint(what)), value <= Int(Int32.max) else {
                throw DeviceStateDecodingError("the \(what) is out of range")
            }
            return value
        }

        /// A version 1 pin: a circle, its announced membership, no times.
        mutating func pinVersion1() throws(DeviceStateDecodingError) -> TrackedPin {
            let id = try string("pin id")
            let latitude = try double("pin latitude")
            let longitude = try double("pin longitude")
            let radius = try double("pin radius")
            let flags = try byte("pin flags")
            guard flags & ~(PinFlag.title | PinFlag.metadata) == 0 else {
                throw DeviceStateDecodingError("pin \(id) has unknown flags \(flags)")
            }
            let stateByte = try byte("pin state")
            guard let membership = Membership(rawValue: stateByte) else {
                throw DeviceStateDecodingError("pin \(id) has an unknown announced state \(stateByte)")
            }
            let title = flags & PinFlag.title != 0 ? try string("pin title") : nil
            let metadata = flags & PinFlag.metadata != 0 ? try string("pin metadata") : nil
            guard let center = Coordinate(latitude: latitude, longitude: longitude),
                let pin = Pin(id: id, center: center, radius: radius, title: title, metadataJSON: metadata)
            else { throw DeviceStateDecodingError("pin \(id) is not a pin geoworker tracks") }
            return TrackedPin(pin: pin, membership: membership)
        }
    }
}
