import Foundation

extension CountryIndex {
    /// The index that ships with geoworker: Natural Earth 1:10m admin-0 countries (German point of view),
    /// compiled by tools/countries (see README, "Country boundaries").
    ///
    /// - Throws: ``CountryIndexError`` when the resource is missing or damaged.
    public static func bundled(
        coastalTolerance: Double = CountryIndex.territorialSea
    ) throws(CountryIndexError) -> CountryIndex {
        guard let url = Bundle.module.url(forResource: "countries", withExtension: "idx") else {
            throw CountryIndexError("the bundled country index (countries.idx) is missing")
        }
        let file: MappedFile
        do {
            file = try MappedFile(path: url.path)
        } catch {
            throw CountryIndexError("the bundled country index (countries.idx) cannot be read: \(error.reason)")
        }
        // The mapping goes when loaded: the index copies its tables.
        return try CountryIndex(
            reading: file.bytes,
            coastalTolerance: coastalTolerance
        )
    }
}
