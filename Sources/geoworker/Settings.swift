import Configuration
import Foundation
import SystemPackage

/// Where every command reads its settings from, first match wins: its flags, then the `GEOWORKER_*`
/// environment variables, then the JSON config file (`--config`, else `GEOWORKER_CONFIG`).
///
/// Every command reads the same keys, so `geoworker tail` finds the topic and brokers `geoworker run` uses
/// from the same environment or file.
enum Settings {
    /// The reader for a command with these flags.
    ///
    /// - Parameters:
    ///   - flags: the command's flags by setting key (`topics.events`, ...), nil where the flag is not given.
    ///   - secretKeys: keys whose values are secrets (never logged).
    ///   - configFile: `--config`, if given.
    ///   - assignments: `--set KEY=VALUE` flags: any setting by its key, read as its environment variable would be.
    /// - Returns: one reader over the flags, the assignments, the environment and the file, in that order of
    ///   precedence.
    /// - Throws: `CommandFailure` when the config file cannot be read, is not strict JSON, or has a key that is not a
    ///   setting, or when a `GEOWORKER_*` variable or an assignment is not one (``SettingsAudit``).
    static func reader(
        flags: [String: ConfigContent?],
        secretKeys: Set<String> = ["kafka", "http.token"],
        configFile: String? = nil,
        assignments: [String] = []
    ) async throws -> ConfigReader {
        let environmentFile = ProcessInfo.processInfo.environment["GEOWORKER_CONFIG"]
        try SettingsAudit.check(
            configFile: configFile ?? environmentFile,
            environment: ProcessInfo.processInfo.environment
        )
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for case (let key, let content?) in flags {
            values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] = ConfigValue(
                content,
                isSecret: secretKeys.contains(key)
            )
        }
        let environment = EnvironmentVariablesProvider(
            secretsSpecifier: .specific(
                Set(secretKeys.map { "GEOWORKER_" + $0.uppercased().replacingOccurrences(of: ".", with: "_") })
            )
        )
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "flags", values: values),
            try assignmentProvider(assignments, secretKeys: secretKeys).prefixKeys(with: "geoworker"),
            environment.prefixKeys(with: "geoworker"),
        ]
        if let file = configFile ?? environmentFile {
            do {
                providers.append(try await FileProvider<JSONSnapshot>(filePath: FilePath(file)))
            } catch {
                throw CommandFailure("config file \(file): \(error)")
            }
        }
        return ConfigReader(providers: providers)
    }

    /// `--set KEY=VALUE` flags as a provider that reads each value as the setting's environment variable would be
    /// read (a number, `true`, a comma-separated list), so that one rule converts both.
    ///
    /// - Throws: `CommandFailure` for an assignment without `=`, or a key no setting has (with the nearest one).
    private static func assignmentProvider(
        _ assignments: [String],
        secretKeys: Set<String>
    ) throws -> EnvironmentVariablesProvider {
        var variables: [String: String] = [:]
        for assignment in assignments {
            guard let equals = assignment.firstIndex(of: "="), equals != assignment.startIndex else {
                throw CommandFailure(
                    "--set takes KEY=VALUE (a key of docs/configuration.md), not '\(assignment)'"
                )
            }
            let key = String(assignment[..<equals])
            guard SettingsAudit.knownKeys.contains(key) else {
                let hint = SettingsAudit.nearest(key, among: Array(SettingsAudit.knownKeys)).map {
                    " (did you mean \($0)?)"
                }
                throw CommandFailure("--set \(key): not a geoworker setting\(hint ?? "")")
            }
            variables[SettingsAudit.environmentName(of: key)] = String(assignment[assignment.index(after: equals)...])
        }
        return EnvironmentVariablesProvider(
            environmentVariables: variables,
            secretsSpecifier: .specific(Set(secretKeys.map(SettingsAudit.environmentName(of:))))
        )
    }
}
