import AddressLookups
import Addresses
import AsyncHTTPClient
import Foundation
import GeoCore
import Geocoding
import JSONCodec
import Logging
import Operations
import Threads
import Worker

/// `geoworker geocode --address`: street addresses from a reverse geocoder for one point or a file of them, through
/// the worker's own lookups (``AddressService``): the same location buckets, the same `addresses.sqlite` cache (in
/// the state directory) and the same pace, so a bulk job never asks the provider faster than a worker would.
struct GeocodeAddresses {
    let service: AddressService

    /// How many lines are asked at once: the pace decides how fast they are answered; this only bounds what waits.
    static let window = 64

    /// A service for `configuration`, its cache in `stateDirectory`; the caller runs it (``run(_:)``).
    init(configuration: AddressConfiguration, stateDirectory: String) throws {
        var configuration = configuration
        // A bulk job waits for every answer: as long as the window takes at the pace, and a request's timeout.
        let windowSeconds = Double(Self.window) / configuration.maxRequestsPerSecond
        configuration.cardWait = .seconds(windowSeconds) + configuration.timeout * 2
        configuration.queueCapacity = max(configuration.queueCapacity, Self.window)
        let cache = try AddressCache(directory: stateDirectory, capacity: configuration.cacheCapacity)
        service = AddressService(
            configuration: configuration,
            cache: cache,
            client: .shared,
            logger: Logger(label: "geoworker.geocode")
        )
    }

    /// Runs `body` while the service's lookups run.
    func run<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        let service = service
        let lookups = Task { try await service.run() }
        defer { lookups.cancel() }
        return try await body()
    }

    /// `{"lat","lon","address":{...}}` for one point, `address` as a device card has it.
    func line(for point: Coordinate) async -> [UInt8] {
        let status = await service.address(at: point)
        var json = JSONWriter()
        json.beginObject()
        json.key("lat")
        json.number(point.latitude)
        json.key("lon")
        json.number(point.longitude)
        json.key("address")
        EndpointAddresses.write(status, to: &json)
        json.endObject()
        return json.takeOutput()
    }

    /// Answers every `lat,lon` line of `inputPath` (- for standard input), in input order.
    ///
    /// A malformed line gets `{"error": ...}`. Returns how many lines were malformed.
    func stream(inputPath: String) async throws -> Int {
        let input = inputPath == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: inputPath)
        guard let input else { throw GeocodeError("cannot read \(inputPath)") }
        // Read whole: at the provider's pace a file takes far longer to answer than to hold (100,000 lines, 2.5 MB,
        // are a day at one request a second).
        // A blocking read: on a thread of its own, not Swift's cooperative pool.
        let text = await DedicatedThread.runOnce(name: "gw-geocode-read") { [UInt8](input.readDataToEndOfFile()) }
        var lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        var malformed = 0
        for start in stride(from: 0, to: lines.count, by: Self.window) {
            malformed += await answer(Array(lines[start..<min(start + Self.window, lines.count)]), firstLine: start + 1)
        }
        return malformed
    }

    private static let malformedLine = Array(#"{"error":"expected 'lat,lon' or 'lat lon' in degrees, in range"}"#.utf8)

    /// Asks for a window of lines at once and writes their answers in order; a malformed line is reported on standard
    /// error with its number.
    private func answer(_ lines: [ArraySlice<UInt8>], firstLine: Int) async -> Int {
        let points = lines.map { Coordinate(latLon: $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0) }
        let answers = await withTaskGroup(of: (Int, [UInt8]).self) { group in
            for (index, point) in points.enumerated() {
                guard let point else { continue }
                group.addTask { (index, await line(for: point)) }
            }
            return await group.reduce(into: [Int: [UInt8]]()) { $0[$1.0] = $1.1 }
        }
        var output: [UInt8] = []
        for index in points.indices {
            output += answers[index] ?? Self.malformedLine
            output.append(UInt8(ascii: "\n"))
            if points[index] == nil {
                let text = String(decoding: lines[index].prefix(80), as: UTF8.self)
                let problem = Coordinate.latLonProblem(text) ?? "expected 'lat,lon' or 'lat lon' in degrees"
                FileHandle.standardError.write(
                    Data("geocode: line \(firstLine + index): \(problem), got '\(text)'\n".utf8)
                )
            }
        }
        FileHandle.standardOutput.write(Data(output))
        return points.count { $0 == nil }
    }
}
