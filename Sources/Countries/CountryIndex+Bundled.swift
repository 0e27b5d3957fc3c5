import Foundation

extension CountryIndex {
    /// The index that ships with geoworker: Natural Earth 1:10m admin-0 countries (German point of view),
    /// compiled by tools/countries (see README, "Country boundaries").
    ///
    /// - Throws: ``CountryIndexError`` when the resource is missing or damaged.
    public static func bundled(
        coastalTolerance: Double = CountryIndex.territorialSea
    ) throws(CountryIndexError) -> CountryIndex {
        guard let url = Bundle.module.url(forResource: "countries", withExtension: "idx"),
            let data = try? Data(contentsOf: url)
        else { throw CountryIndexError("the bundled country index (countries.idx) is missing") }
        return try CountryIndex(bytes: [UInt8](data), coastalTolerance: coastalTolerance)
    }
}
