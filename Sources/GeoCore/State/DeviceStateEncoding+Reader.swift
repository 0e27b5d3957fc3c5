extension DeviceStateEncoding {
    /// Reads the encoding's parts from bytes, each failure naming the part that was cut short or invalid.
    struct Reader {
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

        /// A device's places (version 4, or 5 with the region's local name and GeoNames' regions).
        mutating func places(version: UInt8) throws(DeviceStateDecodingError) -> DevicePlaces {
            let flags = try byte("places flags")
            guard flags & ~PlacesFlag.all == 0 else { throw DeviceStateDecodingError("unknown places flags \(flags)") }
            var places = DevicePlaces()
            if flags & PlacesFlag.region != 0 {
                let code = try string("region code")
                let name = try string("region name")
                let sourceByte = try byte("region source")
                guard let source = PlaceRegion.Source(encodedByte: sourceByte, version: version) else {
                    throw DeviceStateDecodingError("unknown region source \(sourceByte)")
                }
                let localName = version >= 5 ? try string("region local name") : ""
                places.region = PlaceRegion(
                    code: code,
                    name: name,
                    localName: localName.isEmpty ? name : localName,
                    source: source
                )
            }
            if flags & PlacesFlag.regionCandidate != 0 { places.regionCandidate = try string("region candidate") }
            places.regionCandidateFixes = try fixCount("region candidate fixes")
            if flags & PlacesFlag.timeZone != 0 { places.timeZone = try string("time zone") }
            if flags & PlacesFlag.timeZoneCandidate != 0 {
                places.timeZoneCandidate = try string("time-zone candidate")
            }
            places.timeZoneCandidateFixes = try fixCount("time-zone candidate fixes")
            return places
        }

        /// A device's standing with the catalog (version 6): lists sorted and each item once, as the writer writes
        /// them, so that the bytes a restore stores are the ones the worker would write.
        mutating func catalog() throws(DeviceStateDecodingError) -> CatalogVisits {
            let subscriptionCount = try count("subscriptions", smallestItem: 2)
            var subscriptions: [String] = []
            for _ in 0..<subscriptionCount {
                let tag = try string("subscription")
                guard !tag.isEmpty, subscriptions.last.map({ $0 < tag }) ?? true else {
                    throw DeviceStateDecodingError("the subscriptions are not sorted tags, each once")
                }
                subscriptions.append(tag)
            }
            let flags = try byte("catalog flags")
            guard flags <= 1 else { throw DeviceStateDecodingError("unknown catalog flags \(flags)") }
            let decidedAt = flags == 1 ? unzigzag(try varint("catalog decided at")) : nil
            let visitCount = try count("visits", smallestItem: 3)
            var visits: [String: GeofenceStanding] = [:]
            visits.reserveCapacity(visitCount)
            var lastId: String?
            for _ in 0..<visitCount {
                let id = try string("visit id")
                guard !id.isEmpty, lastId.map({ $0 < id }) ?? true else {
                    throw DeviceStateDecodingError("the visits are not sorted by geofence id, each once")
                }
                lastId = id
                let state = try byte("visit state")
                guard state & ~VisitState.all == 0, let membership = Membership(rawValue: state & PinState.membership)
                else { throw DeviceStateDecodingError("visit \(id) has an unknown state \(state)") }
                let since = state & VisitState.since != 0 ? unzigzag(try varint("visit since")) : nil
                let arrival =
                    state & PinState.approachArrival != 0 ? unzigzag(try varint("visit approach arrival")) : nil
                visits[id] = GeofenceStanding(
                    membership: membership,
                    since: since,
                    dwellAnnounced: state & PinState.dwellAnnounced != 0,
                    approachAnnounced: state & PinState.approachAnnounced != 0,
                    approachArrival: arrival
                )
            }
            return CatalogVisits(subscriptions: subscriptions, visits: visits, decidedAt: decidedAt)
        }

        private mutating func fixCount(_ what: String) throws(DeviceStateDecodingError) -> Int {
            guard let count = Int(exactly: try varint(what)) else {
                throw DeviceStateDecodingError("the \(what) is out of range")
            }
            return count
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
