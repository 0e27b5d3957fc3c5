import Foundation
public import IndexFile

extension CountryIndex {
    /// The index that ships with geoworker: Natural Earth 1:10m admin-0 countries (German point of view),
    /// compiled by tools/countries (see README, "Country boundaries").
    ///
    /// - Throws: ``IndexFileError`` when the resource is missing or damaged.
    public static func bundled(
        coastalTolerance: Double = CountryIndex.territorialSea
    ) throws(IndexFileError) -> CountryIndex {
        let name = "the bundled country index (countries.idx)"
        guard let url = Bundle.module.url(forResource: "countries", withExtension: "idx") else {
            throw IndexFileError(file: name, offset: nil, problem: "missing from the installation")
        }
        let file: MappedFile
        do {
            file = try MappedFile(path: url.path)
        } catch {
            throw IndexFileError(file: name, offset: nil, problem: "cannot be read: \(error.reason)")
        }
        // The mapping goes when loaded: the index copies its tables.
        var reader = IndexFileReader(file.bytes, file: name)
        return try CountryIndex(reading: &reader, coastalTolerance: coastalTolerance)
    }
}
