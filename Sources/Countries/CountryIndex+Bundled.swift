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
            let bytes = readWholeFile(url.path)
        else { throw CountryIndexError("the bundled country index (countries.idx) is missing") }
        return try CountryIndex(bytes: bytes, coastalTolerance: coastalTolerance)
    }

    /// The file's bytes read straight into an array (not through `Data`, which would cost a second copy of
    /// 14 MB at every start); nil when it cannot be read.
    private static func readWholeFile(_ path: String) -> [UInt8]? {
        let file = open(path, O_RDONLY)
        guard file >= 0 else { return nil }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0 else { return nil }
        let size = Int(status.st_size)
        var complete = true
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            while initialized < size {
                let received = read(file, buffer.baseAddress! + initialized, size - initialized)
                if received < 0 && errno == EINTR { continue }
                guard received > 0 else { break }
                initialized += received
            }
            complete = initialized == size
        }
        return complete ? bytes : nil
    }
}
