import Countries
import Foundation
import GeoCore

/// The streaming form of `geoworker geocode`: `lat,lon` lines in, one country code per line out,
/// read and written in large chunks.
struct GeocodeStream {
    let index: CountryIndex
    /// Malformed lines reported on standard error before going quiet (all are still counted).
    static let reportedFailures = 10

    /// Processes the whole input; returns the number of malformed lines.
    func run(inputPath: String) throws -> Int {
        let input: FileHandle
        if inputPath == "-" {
            input = FileHandle.standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: inputPath) else {
                throw GeocodeError("cannot read \(inputPath)")
            }
            input = file
        }
        var output: [UInt8] = []
        output.reserveCapacity(1 << 17)
        var pending: [UInt8] = []
        var lineNumber = 0
        var failures = 0
        func handle(_ line: ArraySlice<UInt8>) {
            lineNumber += 1
            var line = line
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            if let point = Coordinate(latLon: line) {
                if let country = index.country(at: point) { output.append(contentsOf: country.code.utf8) }
            } else {
                failures += 1
                if failures <= Self.reportedFailures {
                    let text = String(decoding: line.prefix(80), as: UTF8.self)
                    FileHandle.standardError.write(
                        Data("geocode: line \(lineNumber): expected 'lat,lon' in degrees, got '\(text)'\n".utf8)
                    )
                }
            }
            output.append(UInt8(ascii: "\n"))
            if output.count >= 1 << 16 {
                FileHandle.standardOutput.write(Data(output))
                output.removeAll(keepingCapacity: true)
            }
        }
        while true {
            let chunk = input.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            pending += chunk
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                handle(pending[start..<newline])
                start = newline + 1
            }
            pending.removeSubrange(..<start)
        }
        if !pending.isEmpty { handle(pending[...]) }
        FileHandle.standardOutput.write(Data(output))
        if failures > Self.reportedFailures {
            FileHandle.standardError.write(Data("geocode: \(failures) malformed lines in all\n".utf8))
        }
        return failures
    }
}

struct GeocodeError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
