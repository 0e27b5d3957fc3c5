import JSONCodec

/// One member of a message object as read so far.
///
/// JSON lets a name appear twice; as in Foundation's parser the last occurrence wins, so each occurrence replaces what
/// an earlier one left.
enum JSONField<Value> {
    /// Not in the object, or `null`.
    case absent
    case present(Value)
    /// Present with the wrong type or an impossible value; the text says what it must be.
    case invalid(String)

    /// The value of a required field, or the failure that names what is wrong with it.
    func required(_ name: String) throws(DecodingFailure) -> Value {
        switch self {
        case .absent: throw DecodingFailure.missing(name)
        case .invalid(let requirement): throw DecodingFailure.invalid(name, requirement)
        case .present(let value): return value
        }
    }

    /// The value of an optional field (nil when absent), or the failure that names what is wrong with it.
    func optional(_ name: String) throws(DecodingFailure) -> Value? {
        switch self {
        case .absent: return nil
        case .invalid(let requirement): throw DecodingFailure.invalid(name, requirement)
        case .present(let value): return value
        }
    }
}

extension JSONScanner {
    /// Reads a string member; any other type is recorded as invalid and skipped.
    mutating func stringField(maximumBytes: Int = 1024) throws(DecodingFailure) -> JSONField<String> {
        if try consumeNull() { return .absent }
        guard let raw = try readRawString() else { return try invalidField("must be a string") }
        let field: JSONField<String> = withContent(of: raw) { content in
            guard !content.isEmpty else { return .invalid("must not be empty") }
            guard content.count <= maximumBytes else { return .invalid("must be at most \(maximumBytes) bytes") }
            return .present(String(decoding: content, as: UTF8.self))
        }
        return field
    }

    /// Reads a number member within `range`; any other type is recorded as invalid and skipped.
    mutating func numberField(in range: ClosedRange<Double>) throws(DecodingFailure) -> JSONField<Double> {
        if try consumeNull() { return .absent }
        guard let value = try readNumber() else { return try invalidField("must be a number") }
        guard value.isFinite, range.contains(value) else {
            return .invalid(
                "must be a number from \(range.lowerBound.formattedBound) to \(range.upperBound.formattedBound)"
            )
        }
        return .present(value)
    }

    /// Skips a member value of the wrong type, recording what it should have been.
    mutating func invalidField<Value>(_ requirement: String) throws(DecodingFailure) -> JSONField<Value> {
        let found = describeNextValue()
        try skipValue(depth: 1)
        return .invalid("\(requirement), not \(found)")
    }
}

extension Double {
    /// Range bounds in messages: whole numbers without a fraction.
    fileprivate var formattedBound: String {
        rounded() == self && abs(self) < 1e15 ? String(Int64(self)) : String(self)
    }
}
