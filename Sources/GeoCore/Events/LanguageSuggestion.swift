/// The language to offer a device's user in a country.
public struct LanguageSuggestion: Hashable, Sendable {
    /// Why this language was chosen.
    public enum Basis: String, Hashable, Sendable {
        /// One of the device's languages is official in the country.
        case deviceLanguage = "device-language"
        /// The country's main official language.
        case officialLanguage = "official-language"
        /// No official-language data: the likely language for the region (ICU likely subtags).
        case likelySubtags = "likely-subtags"
    }

    public let countryCode: String
    /// A BCP 47 tag with region, such as `fr-CH`.
    public let language: String
    /// Other languages of the country worth offering, most spoken first.
    public let alternatives: [String]
    public let basis: Basis

    public init(countryCode: String, language: String, alternatives: [String], basis: Basis) {
        self.countryCode = countryCode
        self.language = language
        self.alternatives = alternatives
        self.basis = basis
    }
}
