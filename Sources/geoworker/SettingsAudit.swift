import Configuration
import Foundation
import JSONCodec
import Synchronization

/// The settings a user wrote that geoworker does not read, refused before any command starts.
///
/// A config file key or a `GEOWORKER_*` variable that is not a setting stops the command, naming it and the nearest
/// key there is, rather than leaving the worker on a default its operator never chose (`"broker"` for `"brokers"`
/// would start on localhost:9092). A config file that is not strict JSON (a trailing comma, a comment) is refused the
/// same way.
///
/// The known keys are the ones `geoworker run` reads, found by reading its settings once: the tools read a subset of
/// them under the same names, so one file serves all.
enum SettingsAudit {
    /// Every key `geoworker run` reads, dotted (`http.port`).
    static let knownKeys: Set<String> = {
        let recorder = KeyRecorder()
        _ = try? RunConfiguration(
            config: ConfigReader(provider: InMemoryProvider(values: [:]), accessReporter: recorder)
        )
        return recorder.keys.withLock { $0 }
    }()

    /// `GEOWORKER_*` variables that are not settings: the config file's path, and the project's build, test and fuzz
    /// switches, which a shell that runs the tests may still have.
    static let otherVariables: Set<String> = [
        "GEOWORKER_CONFIG", "GEOWORKER_WARNINGS_AS_ERRORS", "GEOWORKER_NOIDA_DB", "GEOWORKER_TRIAL_SEED",
        "GEOWORKER_FUZZ", "GEOWORKER_CRDKAFKA_SHIM_H", "GEOWORKER_CRASH_AT",
    ]

    /// Refuses a config file that is not a strict JSON object, or that has a key geoworker does not read, and a
    /// `GEOWORKER_*` variable in `environment` that is not a setting.
    ///
    /// - Throws: ``CommandFailure`` naming the first such key, with the nearest known one.
    static func check(configFile: String?, environment: [String: String]) throws(CommandFailure) {
        if let configFile { try checkFile(configFile) }
        let variables = Dictionary(uniqueKeysWithValues: knownKeys.map { (environmentName(of: $0), $0) })
        for name in environment.keys.sorted() where name.hasPrefix("GEOWORKER_") {
            guard variables[name] == nil, !otherVariables.contains(name) else { continue }
            // Measured without the prefix every name shares.
            let hint =
                nearest(String(name.dropFirst(10)), among: variables.keys.map { String($0.dropFirst(10)) })
                .map { " (did you mean GEOWORKER_\($0)?)" } ?? ""
            throw CommandFailure("the environment variable \(name) is not a geoworker setting\(hint)")
        }
    }

    private static func checkFile(_ path: String) throws(CommandFailure) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CommandFailure("config file \(path): cannot read it (\(error.localizedDescription))")
        }
        // Strictly: Foundation's parser on Linux takes a trailing comma, which other tools would refuse.
        let strict = data.withUnsafeBytes { bytes -> DecodingFailure? in
            var scanner = JSONScanner(bytes)
            do throws(DecodingFailure) {
                try scanner.skipValue()
                try scanner.expectEnd()
                return nil
            } catch {
                return error
            }
        }
        if let strict { throw CommandFailure("config file \(path) is not JSON: \(strict)") }
        guard let document = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CommandFailure(
                "config file \(path) must be a JSON object of settings, as docs/configuration.md lists them"
            )
        }
        for key in fileKeys(document, under: []) where !knownKeys.contains(key) {
            let hint = nearest(key, among: Array(knownKeys)).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw CommandFailure("config file \(path): \"\(key)\" is not a geoworker setting\(hint)")
        }
    }

    /// The dotted keys of `object`'s values, nested objects followed down to their leaves, except below a known key
    /// (whose value may itself be an object).
    private static func fileKeys(_ object: [String: Any], under prefix: [String]) -> [String] {
        object.keys.sorted().flatMap { name -> [String] in
            let path = prefix + [name]
            let key = path.joined(separator: ".")
            if !knownKeys.contains(key), let nested = object[name] as? [String: Any] {
                return fileKeys(nested, under: path)
            }
            return [key]
        }
    }

    /// The environment variable of a setting: `GEOWORKER_`, then its key in upper snake case (`http.port` is
    /// `GEOWORKER_HTTP_PORT`, `groupId` `GEOWORKER_GROUP_ID`), as the environment provider reads it.
    static func environmentName(of key: String) -> String {
        var name = "GEOWORKER_"
        for character in key {
            if character == "." {
                name.append("_")
            } else if character.isUppercase {
                name.append("_")
                name.append(character)
            } else {
                name.append(contentsOf: character.uppercased())
            }
        }
        return name
    }

    /// The known name closest to `name` by edit distance, when it is close enough to be what was meant.
    static func nearest(_ name: String, among known: [String]) -> String? {
        let scored = known.map { ($0, editDistance(name.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }) else { return nil }
        return best.1 <= max(2, name.count / 3) ? best.0 : nil
    }

    private static func editDistance(_ a: String, _ b: String) -> Int {
        let (a, b) = (Array(a.utf8), Array(b.utf8))
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// Collects the keys a reader is asked for.
    private final class KeyRecorder: AccessReporter {
        let keys = Mutex<Set<String>>([])

        func report(_ event: AccessEvent) {
            let key = event.metadata.key.components.joined(separator: ".")
            keys.withLock { _ = $0.insert(key) }
        }
    }
}
