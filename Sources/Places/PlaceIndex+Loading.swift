import Countries
import Foundation
import GeoCore

extension PlaceIndex {
    /// Reads the places index at `path` (built by `make places`).
    ///
    /// - Throws: ``PlaceIndexError`` naming the file when it is missing, unreadable or not a complete index.
    public convenience init(contentsOf path: String) throws(PlaceIndexError) {
        let file: MappedFile
        do {
            file = try MappedFile(path: path)
        } catch {
            throw PlaceIndexError("the places index \(path) cannot be read: \(error.reason)")
        }
        do {
            self.init(contents: try PlaceIndexContents(reading: file.bytes))
        } catch {
            throw PlaceIndexError("\(path): \(error.description)")
        }
    }

    /// Reads an index from bytes in memory (as ``PlaceIndexBuilder`` returns them).
    public convenience init(bytes: [UInt8]) throws(PlaceIndexError) {
        let contents = bytes.withUnsafeBytes { bytes in
            Result { () throws(PlaceIndexError) in try PlaceIndexContents(reading: bytes) }
        }
        self.init(contents: try contents.get())
    }

    /// Reads the index at `path`, or, without one, at the first of ``defaultLocations(executable:)`` that exists.
    ///
    /// - Throws: ``PlaceIndexError`` naming where it looked and how to build the index when none is found.
    public static func load(from path: String?) throws(PlaceIndexError) -> PlaceIndex {
        if let path { return try PlaceIndex(contentsOf: path) }
        let candidates = defaultLocations()
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw PlaceIndexError(
                "no places index found (looked for \(candidates.joined(separator: ", "))): build it with "
                    + "`make places`, or give its path"
            )
        }
        return try PlaceIndex(contentsOf: found)
    }

    /// Where geoworker looks for `places.idx` when it is not told: beside the executable, in a source checkout's
    /// `.build-places/` (for an executable in `.build/<configuration>/`), and in `/usr/share/geoworker/`.
    public static func defaultLocations(executable: String = CommandLine.arguments.first ?? "") -> [String] {
        let directory = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        return [
            directory.appendingPathComponent("places.idx").path,
            directory.appendingPathComponent("../../.build-places/places.idx").standardizedFileURL.path,
            directory.appendingPathComponent("../../../.build-places/places.idx").standardizedFileURL.path,
            "/usr/share/geoworker/places.idx",
        ]
    }
}

/// The current offsets from UTC of the index's time zones, from the tz database Foundation carries (ICU's).
struct UTCOffsets: Sendable {
    private let zones: [String: TimeZone]

    init(identifiers: [String]) {
        zones = Dictionary(
            identifiers.compactMap { identifier in TimeZone(identifier: identifier).map { (identifier, $0) } },
            uniquingKeysWith: { first, _ in first }
        )
    }

    func offset(of identifier: String, at time: Int64) -> Int? {
        let zone = zones[identifier] ?? TimeZone(identifier: identifier)
        return zone?.secondsFromGMT(for: Date(timeIntervalSince1970: Double(time) / 1000))
    }
}
