import Countries
import Foundation
import GeoCore
public import IndexFile

extension PlaceIndex {
    /// Reads the places index at `path` (built by `make places`).
    ///
    /// - Throws: ``IndexFileError`` naming the file when it is missing, unreadable or not a complete index.
    public convenience init(contentsOf path: String) throws(IndexFileError) {
        let file: MappedFile
        do {
            file = try MappedFile(path: path)
        } catch {
            throw IndexFileError(
                file: "the places index \(path)",
                offset: nil,
                problem: "cannot be read: \(error.reason)"
            )
        }
        var reader = IndexFileReader(file.bytes, file: "the places index \(path)")
        self.init(contents: try PlaceIndexContents(reading: &reader))
    }

    /// Reads an index from bytes in memory (as ``PlaceIndexBuilder`` returns them).
    public convenience init(bytes: [UInt8]) throws(IndexFileError) {
        let contents = bytes.withUnsafeBytes { bytes in
            Result { () throws(IndexFileError) in
                var reader = IndexFileReader(bytes, file: "the places index")
                return try PlaceIndexContents(reading: &reader)
            }
        }
        self.init(contents: try contents.get())
    }

    /// Reads the index at `path`, or, without one, at the first of ``defaultLocations(executable:)`` that exists.
    ///
    /// - Throws: ``IndexFileError`` naming the file, or where it looked and how to build the index when none is
    ///   found.
    public static func load(from path: String?) throws(IndexFileError) -> PlaceIndex {
        if let path { return try PlaceIndex(contentsOf: path) }
        let candidates = defaultLocations()
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw IndexFileError(
                file: "the places index",
                offset: nil,
                problem: "none found (looked for \(candidates.joined(separator: ", "))): build it with "
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
