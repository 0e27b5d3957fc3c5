/// Appends JSON tokens to a byte buffer, placing the commas.
struct JSONWriter {
    var output: [UInt8]
    /// Whether the next value in the current container needs a comma before it.
    private var needsComma = false

    init(output: [UInt8] = []) { self.output = output }

    /// Appends text that ends where a value or a first member comes next (after a `:` or a `{`).
    mutating func fixed(_ text: [UInt8]) {
        output.append(contentsOf: text)
        needsComma = false
    }

    mutating func beginObject() {
        separate()
        output.append(UInt8(ascii: "{"))
        needsComma = false
    }

    mutating func endObject() {
        output.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func beginArray() {
        separate()
        output.append(UInt8(ascii: "["))
        needsComma = false
    }

    mutating func endArray() {
        output.append(UInt8(ascii: "]"))
        needsComma = true
    }

    mutating func key(_ name: StaticString) {
        // `,"name":` put together on the stack and appended at once: each append checks the array's uniqueness
        // and room, and an event has some thirty keys.
        let count = name.utf8CodeUnitCount
        let comma = needsComma
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: count + 4) { text in
            var end = 0
            if comma {
                text[0] = UInt8(ascii: ",")
                end = 1
            }
            text[end] = UInt8(ascii: "\"")
            (text.baseAddress! + end + 1).initialize(from: name.utf8Start, count: count)
            end += 1 + count
            text[end] = UInt8(ascii: "\"")
            text[end + 1] = UInt8(ascii: ":")
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[..<(end + 2)]))
        }
        needsComma = false
    }

    mutating func member(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    mutating func string(_ value: String) {
        separate()
        output.append(UInt8(ascii: "\""))
        // Ids, names and codes almost never need escaping: copy them whole when they do not.
        let copiedWhole =
            value.utf8.withContiguousStorageIfAvailable { bytes in
                guard !bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
                else { return false }
                output.append(contentsOf: bytes)
                return true
            } ?? false
        if copiedWhole {
            output.append(UInt8(ascii: "\""))
            needsComma = true
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                output.append(contentsOf: [
                    0x5C, UInt8(ascii: "u"), 0x30, 0x30, Self.hexDigits[Int(byte >> 4)],
                    Self.hexDigits[Int(byte & 0xF)],
                ])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
        needsComma = true
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A finite number, in the shortest form that reads back to the same value.
    mutating func number(_ value: Double) {
        separate()
        precondition(value.isFinite, "JSON has no non-finite numbers")
        // (Compared through Int64 rather than `rounded()`, which is a call into the C library.)
        if abs(value) < 1e15 && Double(Int64(value)) == value {
            appendDecimal(Int64(value).magnitude, decimals: 0, negative: value < 0)
        } else if !appendFewDecimals(value) {
            output.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    /// Writes a number of at most 9 decimals between 0.0001 and a million (coordinates, distances, speeds) as
    /// `description` writes it, its shortest form that reads back to the same value, without the general
    /// shortest-digits search (a sixth of an event's encoding).
    ///
    /// Returns false, writing nothing, for others.
    private mutating func appendFewDecimals(_ value: Double) -> Bool {
        let magnitude = abs(value)
        // `description` writes these without an exponent, as this does.
        guard magnitude >= 1e-4 && magnitude < 1e6 else { return false }
        // When some decimal of at most 9 decimals reads back as `magnitude`, the shortest such decimal's digits
        // times 10^(9 - its decimals) is within 0.06 of the exact `magnitude * 1e9` (half an ulp of a number
        // under a million is under 6e-11), and the product below (and the half added to round it) are off by
        // less than 0.07 each: so it rounds to those digits followed by zeros. Other numbers give up here.
        let scaled = magnitude * 1e9
        var digits = Int64(scaled + 0.5)
        guard abs(scaled - Double(digits)) < 0.25 else { return false }
        var decimals = 9
        while decimals > 0 && digits % 10 == 0 {
            digits /= 10
            decimals -= 1
        }
        // Read back exactly as a parser would (one correctly rounded division of exact operands).
        guard decimals > 0, Double(digits) / Self.powersOfTen[decimals] == magnitude else { return false }
        appendDecimal(digits.magnitude, decimals: decimals, negative: value < 0)
        return true
    }

    private static let powersOfTen: [Double] = (0...9).map { (0..<$0).reduce(1.0) { value, _ in value * 10 } }

    /// Writes `digits` with its last `decimals` digits after the point (none and no point for an integer; the
    /// last decimal not 0): the writer's one way of writing digits.
    private mutating func appendDecimal(_ digits: UInt64, decimals: Int, negative: Bool) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { text in
            var start = text.count
            var rest = digits
            var written = 0
            // Digits from the last; the point once `decimals` are written, and at least one before it.
            while rest > 0 || written <= decimals {
                if written == decimals && decimals > 0 {
                    start -= 1
                    text[start] = UInt8(ascii: ".")
                }
                start -= 1
                text[start] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                written += 1
            }
            if negative {
                start -= 1
                text[start] = UInt8(ascii: "-")
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: text[start...]))
        }
    }

    mutating func bool(_ value: Bool) {
        separate()
        output.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    mutating func null() {
        separate()
        output.append(contentsOf: "null".utf8)
        needsComma = true
    }

    mutating func timestamp(_ milliseconds: Int64) {
        separate()
        output.append(UInt8(ascii: "\""))
        Timestamp.appendRFC3339(milliseconds, to: &output)
        output.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Already valid JSON text (a pin's metadata), copied as it is.
    mutating func raw(_ json: String) {
        separate()
        output.append(contentsOf: json.utf8)
        needsComma = true
    }

    /// Already valid JSON bytes, copied as they are.
    mutating func raw(_ json: [UInt8]) {
        separate()
        output.append(contentsOf: json)
        needsComma = true
    }

    /// A pin as events carry it: a circle whole; a polygon by its bounding box (`bbox`, west, south, east,
    /// north, as GeoJSON writes it) and vertex count, so that events stay small whatever the shape.
    mutating func eventPin(_ pin: Pin) {
        beginObject()
        member("id", pin.id)
        switch pin.shape {
        case .circle(let center, let radius):
            member("kind", "circle")
            circle(center, radius)
        case .polygon(let polygon):
            member("kind", "polygon")
            key("bbox")
            beginArray()
            for value in [polygon.bounds.west, polygon.bounds.south, polygon.bounds.east, polygon.bounds.north] {
                number(value)
            }
            endArray()
            key("vertices")
            number(Double(polygon.vertexCount))
        }
        pinDetails(pin)
        endObject()
    }

    /// The `pin` and `position` members most geofence events start with.
    mutating func pinAndPosition(_ pin: Pin, _ position: Fix) {
        key("pin")
        eventPin(pin)
        key("position")
        fix(position)
    }

    /// A pin as a `track` command carries it, polygons whole (GeoJSON).
    mutating func pinDefinition(_ pin: Pin) {
        beginObject()
        member("id", pin.id)
        switch pin.shape {
        case .circle(let center, let radius):
            circle(center, radius)
        case .polygon(let polygon):
            key("shape")
            geoJSON(polygon)
        }
        pinDetails(pin)
        endObject()
    }

    /// A circle's `lat`, `lon` and `radius` members.
    private mutating func circle(_ center: Coordinate, _ radius: Double) {
        key("lat")
        number(center.latitude)
        key("lon")
        number(center.longitude)
        key("radius")
        number(radius)
    }

    private mutating func pinDetails(_ pin: Pin) {
        if let title = pin.title { member("title", title) }
        if let metadata = pin.metadataJSON {
            key("metadata")
            raw(metadata)
        }
        if let dwell = pin.dwellSeconds {
            key("dwellSeconds")
            number(Double(dwell))
        }
        if let approach = pin.approachSeconds {
            key("approachSeconds")
            number(Double(approach))
        }
    }

    /// The shape as a GeoJSON Polygon or MultiPolygon geometry.
    mutating func geoJSON(_ polygon: PolygonShape) {
        beginObject()
        member("type", polygon.isMulti ? "MultiPolygon" : "Polygon")
        key("coordinates")
        let polygons = polygon.coordinates
        if polygon.isMulti { beginArray() }
        for rings in polygons {
            beginArray()
            for ring in rings {
                beginArray()
                for position in ring {
                    beginArray()
                    number(position[0])
                    number(position[1])
                    endArray()
                }
                endArray()
            }
            endArray()
        }
        if polygon.isMulti { endArray() }
        endObject()
    }

    mutating func fix(_ fix: Fix) {
        beginObject()
        key("lat")
        number(fix.coordinate.latitude)
        key("lon")
        number(fix.coordinate.longitude)
        key("timestamp")
        timestamp(fix.timestamp)
        if let accuracy = fix.accuracy {
            key("accuracy")
            number(accuracy)
        }
        endObject()
    }

    private mutating func separate() {
        if needsComma { output.append(UInt8(ascii: ",")) }
    }
}
