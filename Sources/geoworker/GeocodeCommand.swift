import Addresses
import ArgumentParser
import Countries
import Foundation
import GeoCore
import Geocoding
import IndexFile
import JSONCodec
import Places

/// `geoworker geocode`: the offline country lookup, one coordinate or a stream of them.
struct GeocodeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "geocode",
        abstract: "Tell the country of coordinates, offline.",
        discussion: """
            geoworker geocode LAT LON [--languages fr,en]   (or LAT,LON, as maps copy a point)
            Prints the country, its name and the language to suggest, as JSON.

            geoworker geocode --input FILE   (or lines on standard input)
            Reads a point a line, `lat,lon` or `lat lon`, from FILE (- for standard input, which is also read when \
            no point is given and it is not a terminal) and writes one ISO 3166-1 code per line, an empty line \
            where there is no country. A malformed line gets an empty line too, is reported on standard error with \
            why, and makes the exit status 1.

            geoworker geocode --places (LAT LON | --input FILE)
            Adds the region (ISO 3166-2, from a polygon or the nearest place of the same country), the nearest \
            populated place and the IANA time zone: with --input, one JSON object per line, \
            {"lat","lon","country","region","locality","timeZone"} (a malformed line gets {"error": ...}).

            geoworker geocode --address --provider URL (LAT LON | --input FILE) [--state-dir DIR]
            The street address from a reverse geocoder (Nominatim's /reverse at URL), one JSON object per point: \
            {"lat","lon","address"}, `address` as a device card has it. Asked at most --max-requests-per-second \
            (1: Nominatim's public policy) and cached in DIR/addresses.sqlite, which a worker with the same state \
            directory shares.
            """
    )

    /// Collected as unrecognized arguments so that negative numbers (-33.92) are not taken for options.
    @Argument(parsing: .allUnrecognized, help: "Latitude and longitude in degrees (WGS 84): LAT LON or LAT,LON.")
    var coordinate: [String] = []

    /// The point the arguments give, as one `lat,lon` or `lat lon` text.
    private var pointText: String { coordinate.joined(separator: " ") }

    /// Where the points come from: `--input`, else standard input when no point is given and it is not a terminal
    /// (`echo '48.85,2.35' | geoworker geocode`).
    private var input: String? {
        inputPath ?? (coordinate.isEmpty && isatty(STDIN_FILENO) == 0 ? "-" : nil)
    }

    @Option(name: .customLong("input"), help: "A file of `lat,lon` or `lat lon` lines, or - for standard input.")
    var inputPath: String?

    @Option(help: "The device user's languages, most preferred first (BCP 47, comma-separated).")
    var languages: String?

    @Option(
        name: .customLong("tolerance-km"),
        help: "How far out to sea a point still gets the nearest country (0 turns it off)."
    )
    var toleranceKilometres: Double = CountryIndex.territorialSea / 1000

    @Flag(help: "Add the region, the nearest populated place and the time zone (needs the places index).")
    var places = false

    @Option(
        name: .customLong("places-index"),
        help: "The places index (default: places.idx beside the executable, .build-places/, /usr/share/geoworker/)."
    )
    var placesIndexPath: String?

    @Flag(help: "Look up the street address with a reverse geocoder (--provider); not with --places.")
    var address = false

    @Option(help: "The reverse geocoder's base URL (Nominatim's /reverse; default: GEOWORKER_ADDRESS_PROVIDER).")
    var provider: String?

    @Option(help: "Requests a second the provider gets at most.")
    var maxRequestsPerSecond: Double = AddressConfiguration().maxRequestsPerSecond

    @Option(help: "Where addresses.sqlite, the cache of answers, is (default: GEOWORKER_STATE_DIR, ./geoworker-state).")
    var stateDir: String?

    func validate() throws {
        if address {
            if places { throw ValidationError("--address does not combine with --places yet: run them apart.") }
            guard let url = providerURL else {
                throw ValidationError("--address needs --provider URL (or GEOWORKER_ADDRESS_PROVIDER).")
            }
            let configuration = AddressConfiguration(provider: url, maxRequestsPerSecond: maxRequestsPerSecond)
            if let problem = configuration.problems.first { throw ValidationError("--\(problem)") }
        }
        if input == nil {
            guard !coordinate.isEmpty else {
                throw ValidationError(
                    "Give a latitude and a longitude in degrees (LAT LON or LAT,LON), or --input FILE."
                )
            }
            if let problem = Coordinate.latLonProblem(pointText) {
                throw ValidationError("\(problem.prefix(1).uppercased() + problem.dropFirst()) (got: \(pointText)).")
            }
        }
        if inputPath != nil && !coordinate.isEmpty {
            throw ValidationError("Give either a coordinate or --input, not both.")
        }
        guard toleranceKilometres >= 0, toleranceKilometres.isFinite else {
            throw ValidationError("--tolerance-km must be 0 or more.")
        }
    }

    private var providerURL: String? {
        provider ?? ProcessInfo.processInfo.environment["GEOWORKER_ADDRESS_PROVIDER"]
    }

    func run() async throws {
        if address {
            try await runAddresses()
            return
        }
        let (index, placeIndex) = try ParallelLoad.run(
            { () throws(IndexFileError) in try CountryIndex.bundled(coastalTolerance: toleranceKilometres * 1000) },
            { () throws(IndexFileError) in places ? try PlaceIndex.load(from: placesIndexPath) : nil }
        )
        if let input {
            if try stream(input, GeocodeStream(index: index, places: placeIndex)) > 0 { throw ExitCode(1) }
            return
        }
        let point = Coordinate(latLon: Array(pointText.utf8)[...])!  // validated
        var result: [String: Any] = ["lat": point.latitude, "lon": point.longitude]
        if let country = index.country(at: point) {
            result["country"] = country.code
            result["countryName"] = country.name
            let deviceLanguages =
                languages.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
            if let suggestion = try CountryLanguages.bundled().suggestion(
                for: country.code,
                deviceLanguages: deviceLanguages
            ) {
                result["language"] = suggestion.language
                result["alternatives"] = suggestion.alternatives
                result["basis"] = suggestion.basis.rawValue
            }
        } else {
            result["country"] = NSNull()
        }
        if let placeIndex {
            // The same members as a line of --input --places gives.
            var line = JSONWriter()
            placeIndex.places(at: point, within: 0, countryCode: result["country"] as? String)
                .writeGeocodeLine(at: point, country: result["country"] as? String, to: &line)
            let members = try JSONSerialization.jsonObject(with: Data(line.takeOutput())) as? [String: Any] ?? [:]
            for key in ["region", "locality", "timeZone"] { result[key] = members[key] }
        }
        let json = try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys, .withoutEscapingSlashes])
        print(String(decoding: json, as: UTF8.self))
    }

    /// Answers the lines of `inputPath` (- for standard input) on standard output.
    ///
    /// Malformed lines are reported on standard error; returns how many there were.
    private func stream(_ inputPath: String, _ geocode: GeocodeStream) throws -> Int {
        let input = inputPath == "-" ? STDIN_FILENO : open(inputPath, O_RDONLY)
        guard input >= 0 else { throw GeocodeError("cannot read \(inputPath): \(String(cString: strerror(errno)))") }
        defer { if input != STDIN_FILENO { close(input) } }
        let failures = try geocode.run(input: input, inputName: inputPath, output: STDOUT_FILENO) { line, text in
            let problem = Coordinate.latLonProblem(text) ?? "expected 'lat,lon' or 'lat lon' in degrees"
            FileHandle.standardError.write(Data("geocode: line \(line): \(problem), got '\(text)'\n".utf8))
        }
        if failures > GeocodeStream.reportedFailures {
            FileHandle.standardError.write(Data("geocode: \(failures) malformed lines in all\n".utf8))
        }
        return failures
    }

    private func runAddresses() async throws {
        var configuration = AddressConfiguration(provider: providerURL, maxRequestsPerSecond: maxRequestsPerSecond)
        if let agent = ProcessInfo.processInfo.environment["GEOWORKER_ADDRESS_USER_AGENT"] {
            configuration.userAgent = agent
        }
        let directory = stateDir ?? ProcessInfo.processInfo.environment["GEOWORKER_STATE_DIR"] ?? "./geoworker-state"
        let lookups = try GeocodeAddresses(configuration: configuration, stateDirectory: directory)
        try await lookups.run {
            if let input {
                if try await lookups.stream(inputPath: input) > 0 { throw ExitCode(1) }
                return
            }
            let point = Coordinate(latLon: Array(pointText.utf8)[...])!  // validated
            print(String(decoding: await lookups.line(for: point), as: UTF8.self))
        }
    }
}
