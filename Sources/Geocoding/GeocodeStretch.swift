import Countries
import Foundation
import GeoCore
import JSONCodec
import Places

/// One stretch of whole lines of `geoworker geocode --input`, geocoded on one thread: the answers, where each line's
/// answer is among them, and the malformed lines (numbered within the stretch).
///
/// With places, the lines are looked up in ``SpatialOrder``, not in their own: each answer is written where the one
/// looked up before it ended, and the result says where each line's answer is, for the output to go out in input
/// order without the answers being copied into that order first (``OrderedOutput``). A country's code alone is too
/// quick a lookup to be worth the sort: those lines are answered in input order.
final class GeocodeStretch: @unchecked Sendable {
    // @unchecked: a stretch is used by one thread at a time: its geocoding thread, then the reading one.
    /// Each country's code and a newline, by its number in the index.
    let codes: [[UInt8]]
    let places: PlaceIndex?
    private(set) var result = Result()
    /// With places, the well-formed lines with their points, sorted before they are looked up (kept from block to
    /// block for its room).
    private var lookups: [Lookup] = []

    struct Result {
        /// The answers, each with its newline: country codes, or JSON with places (one writer kept for every block,
        /// so that its buffer grows once).
        var output = JSONWriter()
        /// Where each line's answer is in ``output``, by line; empty when ``output`` has them in input order.
        var lines: [Range<Int>] = []
        var lineCount = 0
        /// The first few malformed lines (as many as get reported), and how many there were.
        var malformed: [(line: Int, text: String)] = []
        var malformedCount = 0

        /// Writes the answers to `file` in input order.
        func write(to file: Int32) throws {
            try output.withWrittenBytes { bytes in
                try OrderedOutput.write(lines.isEmpty ? [0..<bytes.count] : lines, of: bytes, to: file)
            }
        }

        /// Counts a line, and one that is malformed (its text kept while few have been).
        mutating func count(_ line: UnsafeRawBufferPointer, malformed: Bool) {
            lineCount += 1
            guard malformed else { return }
            malformedCount += 1
            if self.malformed.count < GeocodeStream.reportedFailures {
                self.malformed.append((lineCount, String(decoding: line.prefix(80), as: UTF8.self)))
            }
        }
    }

    /// With places, the same lines sorted along the curve.
    private var sorted: [Lookup] = []

    /// A line to look up: its point, which travels with it (read by line number in the curve's order, each point
    /// would be a fetch from memory of its own), the point's place on the curve, and the line's number.
    private struct Lookup {
        let point: Coordinate
        let curve: UInt32
        let line: Int32
    }

    init(codes: [[UInt8]], places: PlaceIndex?) {
        self.codes = codes
        self.places = places
    }

    /// Geocodes the lines into a local result, stored once at the end: the stretches sit side by side
    /// in memory, and counting in the object from two threads would share its cache line between cores.
    func geocode(_ bytes: UnsafeRawBufferPointer, _ index: CountryIndex) {
        var result = Result()
        swap(&result.output, &self.result.output)
        swap(&result.lines, &self.result.lines)
        result.output.removeAll()
        result.lines.removeAll(keepingCapacity: true)
        // The indexes are handed to the loops as parameters, not read from the stretch at each line: each read would
        // retain them, and both threads retaining the same object at every line pass its count between the cores.
        if let places {
            read(bytes, into: &result)
            SpatialOrder.sort(lookups, into: &sorted, by: \.curve)
            Self.answer(sorted, index, places, into: &result)
        } else {
            Self.answerInOrder(bytes, index, codes, into: &result)
        }
        self.result = result
    }

    /// With places, what a malformed line gets: an object that says so, keeping the output line for line.
    private static let malformedLine = Array(#"{"error":"expected 'lat,lon' or 'lat lon' in degrees, in range"}"#.utf8)
    private static let newline = [UInt8(ascii: "\n")]

    /// Calls `body` with each line of `bytes`, without its line end.
    private static func forEachLine(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count {
            let end =
                memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start).map {
                    base.distance(to: UnsafeRawPointer($0))
                } ?? bytes.count
            var line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
            if line.last == UInt8(ascii: "\r") { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
            body(line)
            start = end + 1
        }
    }

    /// Reads each line's point to look up.
    private func read(_ bytes: UnsafeRawBufferPointer, into result: inout Result) {
        lookups.removeAll(keepingCapacity: true)
        Self.forEachLine(bytes) { line in
            let point = Coordinate(latLon: line)
            if let point {
                lookups.append(Lookup(point: point, curve: SpatialOrder.key(of: point), line: Int32(result.lineCount)))
            }
            result.count(line, malformed: point == nil)
        }
    }

    /// Answers the well-formed lines with their places, as JSON, in the order given; then the malformed ones.
    private static func answer(
        _ lookups: [Lookup],
        _ index: CountryIndex,
        _ places: PlaceIndex,
        into result: inout Result
    ) {
        // A malformed line keeps the empty range until it is answered below.
        result.lines.append(contentsOf: repeatElement(0..<0, count: result.lineCount))
        for lookup in lookups {
            let start = result.output.count
            let country = index.countryNumber(at: lookup.point).map { index.countries[$0].code }
            places.places(at: lookup.point, within: 0, countryCode: country)
                .writeGeocodeLine(at: lookup.point, country: country, to: &result.output)
            result.output.fixed(newline)
            result.lines[Int(lookup.line)] = start..<result.output.count
        }
        guard result.malformedCount > 0 else { return }
        for line in result.lines.indices where result.lines[line].isEmpty {
            let start = result.output.count
            result.output.fixed(malformedLine)
            result.output.fixed(newline)
            result.lines[line] = start..<result.output.count
        }
    }

    /// Answers each line with its country's code (an empty line for none, or a malformed line), in input order.
    private static func answerInOrder(
        _ bytes: UnsafeRawBufferPointer,
        _ index: CountryIndex,
        _ codes: [[UInt8]],
        into result: inout Result
    ) {
        forEachLine(bytes) { line in
            let point = Coordinate(latLon: line)
            result.count(line, malformed: point == nil)
            result.output.fixed(point.flatMap { index.countryNumber(at: $0) }.map { codes[$0] } ?? newline)
        }
    }
}
