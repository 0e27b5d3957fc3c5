package import Configuration

/// Reading settings with clear errors: swift-configuration's plain getters fall back to the default when a
/// value cannot be converted, which would run a service with a setting its operator never chose.
extension ConfigReader {
    /// The integer at `key`, or `defaultValue` when no source sets it.
    ///
    /// - Throws: ``WorkerError`` with code ``WorkerError/Code/configuration`` when the value is set but is not
    ///   an integer, or lies outside `range`.
    package func integer(
        _ key: ConfigKey,
        default defaultValue: Int,
        in range: ClosedRange<Int>
    ) throws(WorkerError)
        -> Int
    {
        try bounded(key, int(forKey: key), default: defaultValue, in: range, expected: "an integer")
    }

    /// The integer at `key`, or nil when no source sets it.
    ///
    /// - Throws: ``WorkerError`` with code ``WorkerError/Code/configuration`` when the value is set but is not
    ///   an integer, or lies outside `range`.
    package func optionalInteger(_ key: ConfigKey, in range: ClosedRange<Int>) throws(WorkerError) -> Int? {
        guard let value = int(forKey: key) else {
            try requireAbsent(key, expected: "an integer")
            return nil
        }
        return try bounded(key, value, default: value, in: range, expected: "an integer")
    }

    /// The number at `key`, or `defaultValue` when no source sets it; see ``integer(_:default:in:)``.
    package func number(
        _ key: ConfigKey,
        default defaultValue: Double,
        in range: ClosedRange<Double>
    )
        throws(WorkerError) -> Double
    {
        // `double(forKey:)` does not convert an integer value (as an in-memory provider holds `0`), which would
        // then read as unset and fall back to the default without a word. (JSON files and the environment
        // give doubles and strings, which it does convert.)
        let value = double(forKey: key) ?? int(forKey: key).map(Double.init)
        return try bounded(key, value, default: defaultValue, in: range, expected: "a number")
    }

    /// The number at `key`, or nil when no source sets it; see ``integer(_:default:in:)``.
    package func optionalNumber(_ key: ConfigKey, in range: ClosedRange<Double>) throws(WorkerError) -> Double? {
        guard let value = double(forKey: key) ?? int(forKey: key).map(Double.init) else {
            try requireAbsent(key, expected: "a number")
            return nil
        }
        return try bounded(key, value, default: value, in: range, expected: "a number")
    }

    private func bounded<Value: Comparable>(
        _ key: ConfigKey,
        _ value: Value?,
        default defaultValue: Value,
        in range: ClosedRange<Value>,
        expected: String
    ) throws(WorkerError) -> Value {
        guard let value else {
            try requireAbsent(key, expected: expected)
            return defaultValue
        }
        guard range.contains(value) else {
            throw WorkerError(
                .configuration,
                "\(key) must be in \(range.lowerBound)...\(range.upperBound) (got \(value))"
            )
        }
        return value
    }

    /// The boolean at `key` (`true`/`false`, `yes`/`no`, `1`/`0`), or `defaultValue` when no source sets it.
    package func flag(_ key: ConfigKey, default defaultValue: Bool) throws(WorkerError) -> Bool {
        guard let value = bool(forKey: key) else {
            try requireAbsent(key, expected: "true or false")
            return defaultValue
        }
        return value
    }

    /// The non-empty string at `key`, or `defaultValue` when no source sets it.
    package func text(_ key: ConfigKey, default defaultValue: String) throws(WorkerError) -> String {
        let value = string(forKey: key, default: defaultValue)
        guard !value.isEmpty else { throw WorkerError(.configuration, "\(key) must not be empty") }
        return value
    }

    /// The value at `key` among `Choice`'s raw values, or `defaultValue` when no source sets it.
    ///
    /// - Throws: ``WorkerError`` naming the key and the values it takes.
    package func choice<Choice: RawRepresentable & CaseIterable>(
        _ key: ConfigKey,
        default defaultValue: Choice
    ) throws(WorkerError) -> Choice where Choice.RawValue == String {
        guard let text = try optionalText(key) else { return defaultValue }
        guard let value = Choice(rawValue: text) else {
            let allowed = Choice.allCases.map(\.rawValue).joined(separator: " or ")
            throw WorkerError(.configuration, "\(key) must be \(allowed) (got \(text))")
        }
        return value
    }

    /// The non-empty string at `key`, or nil when no source sets it.
    package func optionalText(_ key: ConfigKey) throws(WorkerError) -> String? {
        guard let value = string(forKey: key) else { return nil }
        guard !value.isEmpty else { throw WorkerError(.configuration, "\(key) must not be empty") }
        return value
    }

    /// The non-empty secret string at `key` (redacted in swift-configuration's access reports), or nil when
    /// no source sets it.
    package func secretText(_ key: ConfigKey) throws(WorkerError) -> String? {
        guard let value = string(forKey: key, isSecret: true) else { return nil }
        guard !value.isEmpty else { throw WorkerError(.configuration, "\(key) must not be empty") }
        return value
    }

    /// Reads one component's settings from the keys under `scope` (`http`, `topics`, ...) with a scoped
    /// reader, so that the component knows only its own keys; an error still names the whole key.
    package func settings<Value>(
        under scope: ConfigKey,
        _ read: (ConfigReader) throws(WorkerError) -> Value
    ) throws(WorkerError) -> Value {
        do {
            return try read(scoped(to: scope))
        } catch {
            throw WorkerError(code: error.code, message: "\(scope).\(error.message)", underlying: error.underlying)
        }
    }

    /// The librdkafka properties at `kafka`: a list of `KEY=VALUE` entries (the value may itself contain
    /// `=`), read as secret since they may hold passwords.
    ///
    /// - Throws: ``WorkerError`` naming the entry without a `=` or with an empty key (its value is not shown).
    package func kafkaProperties() throws(WorkerError) -> [String: String] {
        var properties: [String: String] = [:]
        for entry in stringArray(forKey: "kafka", isSecret: true) ?? [] {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                let shown = parts.first.map { "\($0)" } ?? ""
                throw WorkerError(
                    .configuration,
                    "kafka properties are KEY=VALUE; got an entry starting \"\(shown.prefix(40))\" without one"
                )
            }
            properties[String(parts[0])] = String(parts[1])
        }
        return properties
    }

    /// A value of the wrong type reads as nil; any value at all reads as a string from environment variables
    /// and from a string in a file, so that is how "set but not convertible" is told from "not set".
    private func requireAbsent(_ key: ConfigKey, expected: String) throws(WorkerError) {
        if let raw = string(forKey: key) {
            throw WorkerError(.configuration, "\(key) must be \(expected) (got \"\(raw)\")")
        }
    }
}
