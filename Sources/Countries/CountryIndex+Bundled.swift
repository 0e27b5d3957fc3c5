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
        let file = open(url.path, O_RDONLY)
        guard file >= 0 else { throw CountryIndexError("the bundled country index (countries.idx) cannot be read") }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_size > 0 else {
            throw CountryIndexError("the bundled country index (countries.idx) cannot be read")
        }
        // Mapped rather than read: the tables are copied out of the page cache once, with no second copy of
        // the 14 MB file in fresh memory first (the load is most of a start-up). The mapping goes when loaded.
        let size = Int(status.st_size)
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, file, 0), mapping != MAP_FAILED
        else { throw CountryIndexError("the bundled country index (countries.idx) cannot be mapped") }
        defer { munmap(mapping, size) }
        return try CountryIndex(
            reading: UnsafeRawBufferPointer(start: mapping, count: size),
            coastalTolerance: coastalTolerance
        )
    }
}
