/// Answers which country a coordinate is in: the seam between the tracker and the country index.
public protocol CountryResolver: Sendable {
    /// The ISO 3166-1 alpha-2 code of the country at `coordinate`, or nil where there is none
    /// (open sea, Antarctica's unclaimed parts).
    func countryCode(at coordinate: Coordinate) -> String?
    /// The code of the country every point within `radius` metres of `coordinate` is in, or nil when they
    /// are not all in one (a border or a coast within reach, open sea): whether a fix of that accuracy
    /// decides the device's country.
    func countryCode(at coordinate: Coordinate, within radius: Double) -> String?
    /// ``countryCode(at:within:)``, and how far from `coordinate` (up to `reach` metres) no border or coast
    /// lies when the disc lies in one country's land: every disc within that circle lies in the same country
    /// (``CountryArea``). A nil clearance says nothing; resolvers that cannot tell leave it nil.
    func countryCode(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (code: String?, clearance: Double?)
    /// The English name of the country with this code.
    func countryName(for code: String) -> String
}

extension CountryResolver {
    public func countryCode(
        at coordinate: Coordinate,
        within radius: Double,
        clearanceUpTo reach: Double
    ) -> (code: String?, clearance: Double?) {
        (countryCode(at: coordinate, within: radius), nil)
    }
}

/// Chooses the language to suggest when a device arrives in a country.
public protocol LanguageAdvisor: Sendable {
    /// The suggestion for a device whose user lists `deviceLanguages` (BCP 47, most preferred first),
    /// or nil when there is nothing to suggest.
    func suggestion(for countryCode: String, deviceLanguages: [String]) -> LanguageSuggestion?
}
