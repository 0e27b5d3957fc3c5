import Countries
import Foundation
import GeoCore
import JSONCodec
import Places

/// The streaming form of `geoworker geocode`: `lat,lon` lines in, one country code per line out (with places, one
/// JSON object per line: ``PlaceAnswer/writeGeocodeLine(at:country:to:)``).
///
/// Built for files of millions of lines: input is read in large blocks straight into one buffer, each block's
/// whole lines are cut into one stretch per core and geocoded in parallel, each line read in place
/// (``Coordinate/init(latLon:)-(UnsafeRawBufferPointer)``, the project's number reader, no String per number)
/// and answered from bytes prepared once per country; the stretches' output is written in input order.
struct GeocodeStream {
    let index: CountryIndex
    /// With `--places`: the places index, each line answered as JSON.
    let places: PlaceIndex?
    /// Malformed lines reported on standard error before going quiet (all are still counted).
    static let reportedFailures = 10
    private static let blockSize = 1 << 18
    /// Below this, a block is not worth splitting between threads.
    private static let smallestStretch = 1 << 16

    /// Processes the whole input; returns the number of malformed lines.
    func run(inputPath: String) throws -> Int {
        let input: Int32
        if inputPath == "-" {
            input = STDIN_FILENO
        } else {
            input = open(inputPath, O_RDONLY)
            guard input >= 0 else {
                throw GeocodeError("cannot read \(inputPath): \(String(cString: strerror(errno)))")
            }
        }
        defer { if input != STDIN_FILENO { close(input) } }
        let codes = index.countries.map { Array($0.code.utf8) + [UInt8(ascii: "\n")] }
        let threads = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let stretches = (0..<threads).map { _ in Stretch(codes: codes, places: places) }
        var report = FailureReport()
        // `filled` bytes of `buffer` hold input; a partial last line moves to the front before the next read.
        var buffer = [UInt8](repeating: 0, count: Self.blockSize)
        var filled = 0
        while true {
            if filled == buffer.count { buffer.append(contentsOf: repeatElement(0, count: buffer.count)) }
            let received = buffer.withUnsafeMutableBytes { bytes in
                read(input, bytes.baseAddress! + filled, bytes.count - filled)
            }
            if received < 0 {
                if errno == EINTR { continue }
                throw GeocodeError("cannot read \(inputPath): \(String(cString: strerror(errno)))")
            }
            let end = filled + received
            // At the end of the input, a last line without a newline is a line too.
            let whole = try buffer.withUnsafeBytes { bytes in
                let block = UnsafeRawBufferPointer(rebasing: bytes[..<end])
                let whole = received == 0 ? end : Self.endOfLastLine(in: block)
                try geocode(UnsafeRawBufferPointer(rebasing: block[..<whole]), stretches: stretches, report: &report)
                return whole
            }
            if received == 0 { break }
            buffer.withUnsafeMutableBytes { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + whole, end - whole)
            }
            filled = end - whole
        }
        if report.failures > Self.reportedFailures {
            FileHandle.standardError.write(Data("geocode: \(report.failures) malformed lines in all\n".utf8))
        }
        return report.failures
    }

    /// The offset just past the block's last newline (0 when it has none).
    private static func endOfLastLine(in block: UnsafeRawBufferPointer) -> Int {
        (block.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
    }

    /// Geocodes whole lines: cut into stretches at newlines, the stretches in parallel, then reports and
    /// output in input order.
    private func geocode(
        _ lines: UnsafeRawBufferPointer,
        stretches: [Stretch],
        report: inout FailureReport
    ) throws {
        guard !lines.isEmpty else { return }
        let parts = max(1, min(stretches.count, lines.count / Self.smallestStretch))
        var bounds = [0]
        for part in 1..<parts {
            let cut = max(bounds[part - 1], lines.count * part / parts)
            let newline = lines[cut...].firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? lines.count
            bounds.append(newline)
        }
        bounds.append(lines.count)
        let index = index
        let shared = SharedLines(bytes: lines, bounds: bounds)
        let busy = stretches
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            busy[part].geocode(shared.stretch(part), index)
        }
        for part in 0..<parts {
            report.add(stretches[part].result)
            try stretches[part].result.output.withWrittenBytes(Self.write)
        }
    }

    private static func write(_ output: UnsafeRawBufferPointer) throws {
        var written = 0
        while written < output.count {
            let result = Foundation.write(STDOUT_FILENO, output.baseAddress! + written, output.count - written)
            if result < 0 {
                if errno == EINTR { continue }
                throw GeocodeError("cannot write the output: \(String(cString: strerror(errno)))")
            }
            written += result
        }
    }

    /// One stretch of whole lines geocoded on one thread: the output and the malformed lines, numbered within
    /// the stretch.
    private final class Stretch: @unchecked Sendable {
        // @unchecked: a stretch is used by one thread at a time: its geocoding thread, then the reading one.
        /// Each country's code and a newline, by its number in the index.
        let codes: [[UInt8]]
        let places: PlaceIndex?
        private(set) var result = Result()

        struct Result {
            /// The stretch's lines: country codes, or JSON with places (one writer kept for every block, so that its
            /// buffer grows once).
            var output = JSONWriter()
            var lines = 0
            /// The first few malformed lines (as many as get reported), and how many there were.
            var malformed: [(line: Int, text: String)] = []
            var malformedCount = 0
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
            result.output.removeAll()
            if let base = bytes.baseAddress {
                var start = 0
                while start < bytes.count {
                    let end =
                        memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start).map {
                            base.distance(to: UnsafeRawPointer($0))
                        } ?? bytes.count
                    handle(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), index, into: &result)
                    start = end + 1
                }
            }
            self.result = result
        }

        /// With places, what a malformed line gets: an object that says so, keeping the output line for line.
        private static let malformedLine = Array(#"{"error":"expected 'lat,lon' in degrees"}"#.utf8)
        private static let newline = [UInt8(ascii: "\n")]

        private func handle(_ line: UnsafeRawBufferPointer, _ index: CountryIndex, into result: inout Result) {
            result.lines += 1
            var line = line
            if line.last == UInt8(ascii: "\r") { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
            guard let point = Coordinate(latLon: line) else {
                result.malformedCount += 1
                if result.malformed.count < GeocodeStream.reportedFailures {
                    result.malformed.append((result.lines, String(decoding: line.prefix(80), as: UTF8.self)))
                }
                if places != nil { result.output.fixed(Self.malformedLine) }
                result.output.fixed(Self.newline)
                return
            }
            if let places {
                let country = index.countryNumber(at: point).map { index.countries[$0].code }
                places.places(at: point, within: 0, countryCode: country)
                    .writeGeocodeLine(at: point, country: country, to: &result.output)
                result.output.fixed(Self.newline)
            } else if let number = index.countryNumber(at: point) {
                result.output.fixed(codes[number])
            } else {
                result.output.fixed(Self.newline)
            }
        }
    }

    /// A block's whole lines and where its stretches begin, read by every geocoding thread while the reading
    /// thread waits for them.
    private struct SharedLines: @unchecked Sendable {
        // @unchecked: the bytes stay valid and unchanged until every thread is done with them.
        let bytes: UnsafeRawBufferPointer
        let bounds: [Int]

        func stretch(_ part: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[bounds[part]..<bounds[part + 1]])
        }
    }

    /// Malformed lines over the whole input: the first few reported on standard error as they come.
    private struct FailureReport {
        var linesBefore = 0
        var failures = 0

        mutating func add(_ stretch: Stretch.Result) {
            for (line, text) in stretch.malformed.prefix(max(0, GeocodeStream.reportedFailures - failures)) {
                FileHandle.standardError.write(
                    Data("geocode: line \(linesBefore + line): expected 'lat,lon' in degrees, got '\(text)'\n".utf8)
                )
            }
            failures += stretch.malformedCount
            linesBefore += stretch.lines
        }
    }
}

struct GeocodeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
