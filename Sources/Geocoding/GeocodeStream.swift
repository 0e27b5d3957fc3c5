public import Countries
import Foundation
import GeoCore
public import Places

/// The engine of `geoworker geocode --input`: `lat,lon` lines in, one country code per line out (with places, one
/// JSON object per line: ``PlaceAnswer/writeGeocodeLine(at:country:to:)``), in input order.
///
/// Built for files of millions of lines: input is read in blocks of a megabyte straight into one buffer, each
/// block's whole lines are cut into one stretch per core (``GeocodeStretch``) and geocoded in parallel, each line
/// read in place (``Coordinate/init(latLon:)-(UnsafeRawBufferPointer)``, the project's number reader, no String per
/// number) and answered from bytes prepared once per country, or with places looked up along a curve over the map
/// (``SpatialOrder``); the stretches' output is written in input order (``OrderedOutput``).
///
/// A block of a megabyte holds some 50,000 lines: enough for points of a whole-globe file, looked up along the curve,
/// to find most of what they need in the cache, and little enough for each thread's answers to stay in it.
public struct GeocodeStream: Sendable {
    let index: CountryIndex
    /// With places: the places index, each line answered as JSON.
    let places: PlaceIndex?
    /// Malformed lines handed to the caller's report, with their text, before going quiet (all are still counted).
    public static let reportedFailures = 10
    private static let blockSize = 1 << 20
    /// Below this, a block is not worth splitting between threads.
    private static let smallestStretch = 1 << 16

    public init(index: CountryIndex, places: PlaceIndex?) {
        self.index = index
        self.places = places
    }

    /// Answers every line of `input` (read to its end; named `inputName` in errors) into `output`, in input order.
    ///
    /// The first ``reportedFailures`` malformed lines go to `report` as they come, numbered from 1.
    /// - Returns: how many lines were malformed.
    public func run(
        input: Int32,
        inputName: String,
        output: Int32,
        report: (_ line: Int, _ text: String) -> Void
    ) throws -> Int {
        let codes = index.countries.map { Array($0.code.utf8) + [UInt8(ascii: "\n")] }
        let threads = max(1, min(ProcessInfo.processInfo.activeProcessorCount, 8))
        let stretches = (0..<threads).map { _ in GeocodeStretch(codes: codes, places: places) }
        var failures = MalformedLines()
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
                throw GeocodeError("cannot read \(inputName): \(String(cString: strerror(errno)))")
            }
            let end = filled + received
            // At the end of the input, a last line without a newline is a line too.
            let whole = try buffer.withUnsafeBytes { bytes in
                let block = UnsafeRawBufferPointer(rebasing: bytes[..<end])
                let whole = received == 0 ? end : Self.endOfLastLine(in: block)
                try geocode(
                    UnsafeRawBufferPointer(rebasing: block[..<whole]),
                    stretches: stretches,
                    into: output,
                    failures: &failures,
                    report: report
                )
                return whole
            }
            if received == 0 { break }
            buffer.withUnsafeMutableBytes { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + whole, end - whole)
            }
            filled = end - whole
        }
        return failures.count
    }

    /// The offset just past the block's last newline (0 when it has none).
    private static func endOfLastLine(in block: UnsafeRawBufferPointer) -> Int {
        (block.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
    }

    /// Geocodes whole lines: cut into stretches at newlines, the stretches in parallel, then reports and
    /// output in input order.
    private func geocode(
        _ lines: UnsafeRawBufferPointer,
        stretches: [GeocodeStretch],
        into output: Int32,
        failures: inout MalformedLines,
        report: (_ line: Int, _ text: String) -> Void
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
            let result = stretches[part].result
            failures.add(result, report: report)
            try result.write(to: output)
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

    /// Malformed lines over the whole input: the first few handed to the caller's report as they come.
    private struct MalformedLines {
        var linesBefore = 0
        var count = 0

        mutating func add(_ stretch: GeocodeStretch.Result, report: (_ line: Int, _ text: String) -> Void) {
            for (line, text) in stretch.malformed.prefix(max(0, GeocodeStream.reportedFailures - count)) {
                report(linesBefore + line, text)
            }
            count += stretch.malformedCount
            linesBefore += stretch.lineCount
        }
    }
}

/// Input that could not be read or output that could not be written, with the system's reason.
public struct GeocodeError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
