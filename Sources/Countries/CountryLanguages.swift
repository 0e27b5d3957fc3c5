import Foundation
public import GeoCore

/// Suggests the language to offer a device's user in a country, from CLDR's table of each country's
/// languages (tools/countries/generate_languages.py).
///
/// Policy, in order:
/// 1. the first of the device's languages that is official (or de facto official) in the country: a French
///    speaker entering Switzerland gets `fr-CH`;
/// 2. else the country's main official language (the most spoken): `de-CH`;
/// 3. else, where CLDR lists no official language, ICU's likely subtags for the region (`und-XX`).
///
/// Results are BCP 47 tags with the country as region (`fr-CH`, `zh-Hant-TW`); alternatives are the
/// country's other official languages, most spoken first.
public struct CountryLanguages: LanguageAdvisor, Sendable {
    /// One language of a country.
    public struct Language: Hashable, Sendable {
        public enum Status: String, Sendable {
            case official
            case deFactoOfficial = "de_facto_official"
            case officialRegional = "official_regional"
        }

        /// BCP 47 language, with script where CLDR gives one (`zh-Hant`).
        public let tag: String
        public let status: Status
        /// Share of the country's population that speaks it.
        public let populationPercent: Double
    }

    /// Languages by country code, official ones first, each group by share.
    public let languagesByCountry: [String: [Language]]
    /// Each country's answers, made once: a suggestion is asked at every device's first fix, and making one filters
    /// the table, splits tags and builds strings, work that depends on the country alone.
    private let suggestionsByCountry: [String: CountrySuggestions]

    /// The answers for one country of the table.
    fileprivate struct CountrySuggestions: Sendable {
        /// Each official language's primary subtag (lowercased) and the suggestion of it for a device that lists it.
        var byDeviceLanguage: [(primarySubtag: String, suggestion: LanguageSuggestion)]
        /// The suggestion for a device that lists none of them: the main official language, else ICU's likely
        /// subtags.
        var otherwise: LanguageSuggestion?
    }

    /// The table that ships with geoworker.
    public static func bundled() throws(CountryIndexError) -> CountryLanguages {
        guard let url = Bundle.module.url(forResource: "languages", withExtension: "tsv"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { throw CountryIndexError("the bundled language table (languages.tsv) is missing") }
        return try CountryLanguages(table: text)
    }

    /// Reads the table format of tools/countries/generate_languages.py.
    public init(table: String) throws(CountryIndexError) {
        var result: [String: [Language]] = [:]
        for line in table.split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard columns.count == 2 else { throw CountryIndexError("language table: bad line '\(line)'") }
            var languages: [Language] = []
            for entry in columns[1].split(separator: ",") {
                let fields = entry.split(separator: ":")
                guard fields.count == 3, let status = Language.Status(rawValue: String(fields[1])),
                    let percent = Double(fields[2])
                else {
                    throw CountryIndexError("language table: bad entry '\(entry)'")
                }
                languages.append(Language(tag: String(fields[0]), status: status, populationPercent: percent))
            }
            result[String(columns[0])] = languages
        }
        languagesByCountry = result
        suggestionsByCountry = Dictionary(
            uniqueKeysWithValues: result.map { ($0.key, CountrySuggestions(country: $0.key, languages: $0.value)) }
        )
    }

    public func suggestion(for countryCode: String, deviceLanguages: [String]) -> LanguageSuggestion? {
        // A country the table lacks is answered from ICU each time (rare: the table covers the index's countries).
        let country = suggestionsByCountry[countryCode] ?? CountrySuggestions(country: countryCode, languages: [])
        for deviceLanguage in deviceLanguages {
            for (primarySubtag, suggestion) in country.byDeviceLanguage
            where Self.hasPrimarySubtag(deviceLanguage, primarySubtag) {
                return suggestion
            }
        }
        return country.otherwise
    }

    /// Whether `tag`'s primary language subtag (before the first `-` or `_`) is `primarySubtag`, in any case.
    ///
    /// Compares bytes: splitting and lowercasing the tag allocated at every call.
    private static func hasPrimarySubtag(_ tag: String, _ primarySubtag: String) -> Bool {
        var expected = primarySubtag.utf8.makeIterator()
        for byte in tag.utf8 {
            if byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") { break }
            guard let wanted = expected.next(), wanted == (byte | (byte >= 65 && byte <= 90 ? 0x20 : 0)) else {
                return false
            }
        }
        return expected.next() == nil
    }
}

extension CountryLanguages.CountrySuggestions {
    /// The policy's answers for `country`, whose table entry is `languages`.
    init(country: String, languages: [CountryLanguages.Language]) {
        let tags = languages.filter { $0.status != .officialRegional }.map(\.tag)
        func suggestion(_ language: String, basis: LanguageSuggestion.Basis) -> LanguageSuggestion {
            LanguageSuggestion(
                countryCode: country,
                language: "\(language)-\(country)",
                alternatives: tags.filter { $0 != language }.map { "\($0)-\(country)" },
                basis: basis
            )
        }
        // 1. A language the device lists, matched on its primary language subtag (fr-BE matches fr).
        byDeviceLanguage = tags.map { tag in
            let primary = tag.split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map { $0.lowercased() } ?? ""
            return (primary, suggestion(tag, basis: .deviceLanguage))
        }
        // 2. The main official language; 3. else ICU's likely subtags for the region.
        otherwise = tags.first.map { suggestion($0, basis: .officialLanguage) } ?? Self.likelySubtags(country)
    }

    /// ICU's likely subtags for the region: und-AQ gives en-Latn-AQ, suggested as en-AQ.
    private static func likelySubtags(_ country: String) -> LanguageSuggestion? {
        let likely = Locale.Language(identifier: "und-\(country)")
        guard let language = likely.maximalIdentifier.split(separator: "-").first, language != "und" else { return nil }
        // BCP 47 leaves out a script that is the language's usual one (en-AQ, not en-Latn-AQ; but zh-Hant-TW).
        let script = likely.script?.identifier
        let usualScript = Locale.Language(identifier: String(language)).script?.identifier
        let tag =
            script == nil || script == usualScript ? "\(language)-\(country)" : "\(language)-\(script!)-\(country)"
        return LanguageSuggestion(countryCode: country, language: tag, alternatives: [], basis: .likelySubtags)
    }
}

extension CountryIndex: CountryResolver {
    public func countryCode(at coordinate: Coordinate) -> String? { country(at: coordinate)?.code }
    public func countryCode(at coordinate: Coordinate, within radius: Double) -> String? {
        country(at: coordinate, within: radius)?.code
    }
    public func countryCode(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (code: String?, clearance: Double?) {
        let (country, clearance) = country(at: coordinate, within: radius, clearanceUpTo: reach)
        return (country?.code, clearance)
    }

    public func countryName(for code: String) -> String { country(code: code)?.name ?? code }
}
