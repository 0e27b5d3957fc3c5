import JSONCodec

/// JSON answers of other instances taken apart only as far as merging them needs: an object's members and an
/// array's elements as their text, copied into the merged answer as they came.
enum RawJSON {
    /// The members of the JSON object `bytes` holds, each as its value's text; nil when it is not an object.
    static func members(_ bytes: [UInt8]) -> [String: [UInt8]]? {
        bytes.withUnsafeBytes { buffer -> [String: [UInt8]]? in
            var scanner = JSONScanner(buffer)
            do {
                guard try scanner.enterObject() else { return nil }
                var members: [String: [UInt8]] = [:]
                var first = true
                while let key = try scanner.nextKey(first: first) {
                    first = false
                    let name = scanner.withDecodedContent(of: key) { String(decoding: $0, as: UTF8.self) }
                    let start = scanner.valueStart()
                    try scanner.skipValue()
                    members[name] = Array(buffer[start..<scanner.position])
                }
                try scanner.expectEnd()
                return members
            } catch {
                return nil
            }
        }
    }

    /// The elements of the JSON array `bytes` holds, each as its text; nil when it is not an array.
    static func elements(_ bytes: [UInt8]) -> [[UInt8]]? {
        bytes.withUnsafeBytes { buffer -> [[UInt8]]? in
            var scanner = JSONScanner(buffer)
            do {
                guard try scanner.enterArray() else { return nil }
                var elements: [[UInt8]] = []
                var first = true
                while try scanner.nextElement(first: first) {
                    first = false
                    let start = scanner.valueStart()
                    try scanner.skipValue()
                    elements.append(Array(buffer[start..<scanner.position]))
                }
                try scanner.expectEnd()
                return elements
            } catch {
                return nil
            }
        }
    }

    /// The string a member's text holds; nil for anything else.
    static func string(_ bytes: [UInt8]?) -> String? {
        guard let bytes, bytes.first == UInt8(ascii: "\"") else { return nil }
        return bytes.withUnsafeBytes { buffer -> String? in
            var scanner = JSONScanner(buffer)
            guard let raw = try? scanner.readRawString() else { return nil }
            return scanner.withContent(of: raw) { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// The number a member's text holds; nil for anything else.
    static func number(_ bytes: [UInt8]?) -> Double? {
        guard let bytes else { return nil }
        return bytes.withUnsafeBytes { buffer -> Double? in
            var scanner = JSONScanner(buffer)
            return (try? scanner.readNumber()) ?? nil
        }
    }
}
