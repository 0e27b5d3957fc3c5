import Countries
import Foundation
import GeoCore
import Geocoding
import JSONCodec
import Places
import TestSupport
import Testing

@Suite("GeocodeStream: files of lines answered in parallel, in input order", .timeLimit(.minutes(5)))
struct GeocodeStreamTests {
    @Test("countries: every line's answer where its line was, over several read blocks and threads")
    func countries() throws {
        let index = try CountryIndex.bundled()
        // Some 300,000 lines, about 6 MB: several read blocks of a megabyte, each split between threads.
        var random = SplitMix64(seed: 20_261_206)
        var lines: [String] = []
        var malformed: [Int] = []
        for number in 1...300_000 {
            if random.next(below: 20_000) == 0 {
                lines.append("not a point \(number)")
                malformed.append(number)
                continue
            }
            let line = "\(random.uniform(-90, 90)),\(random.uniform(-180, 180))"
            lines.append(random.next(below: 10) == 0 ? line + "\r" : line)
        }
        let answers = try GeocodeRun(lines: lines, stream: GeocodeStream(index: index, places: nil))

        #expect(answers.lines.count == lines.count)
        for (number, line) in lines.enumerated() {
            let point = Coordinate(latLon: ArraySlice(line.utf8.filter { $0 != UInt8(ascii: "\r") }))
            let expected = point.flatMap { index.country(at: $0)?.code } ?? ""
            guard answers.lines[number] == expected else {
                Issue.record("line \(number + 1) (\(line)): \(answers.lines[number]), expected \(expected)")
                return
            }
        }
        #expect(answers.malformedCount == malformed.count)
        #expect(answers.reported.map(\.line) == Array(malformed.prefix(GeocodeStream.reportedFailures)))
        #expect(answers.reported.first?.text == "not a point \(malformed[0])")
    }

    @Test("places: looked up along the curve, written back in input order; a malformed line keeps its place")
    func places() throws {
        let index = try CountryIndex.bundled()
        let places = try PlaceIndex.load(from: nil)
        var random = SplitMix64(seed: 7)
        var lines: [String] = []
        for number in 1...80_000 {
            lines.append(
                number % 9_999 == 0 ? "?" : "\(random.uniform(-60, 70)),\(random.uniform(-180, 180))"
            )
        }
        // The last line has no newline: it is a line all the same.
        let answers = try GeocodeRun(
            lines: lines,
            stream: GeocodeStream(index: index, places: places),
            finalNewline: false
        )

        #expect(answers.lines.count == lines.count)
        for (number, line) in lines.enumerated() {
            let expected: String
            if let point = Coordinate(latLon: ArraySlice(line.utf8)) {
                let country = index.country(at: point)?.code
                var json = JSONWriter()
                places.places(at: point, within: 0, countryCode: country)
                    .writeGeocodeLine(at: point, country: country, to: &json)
                expected = String(decoding: json.takeOutput(), as: UTF8.self)
            } else {
                expected = #"{"error":"expected 'lat,lon' or 'lat lon' in degrees, in range"}"#
            }
            guard answers.lines[number] == expected else {
                Issue.record("line \(number + 1) (\(line)): \(answers.lines[number]), expected \(expected)")
                return
            }
        }
        #expect(answers.malformedCount == 8)
    }

    @Test("input that cannot be read: an error that names it")
    func unreadableInput() throws {
        let directory = FileManager.default.temporaryDirectory.path
        let input = open(directory, O_RDONLY)
        try #require(input >= 0)
        defer { close(input) }
        let stream = GeocodeStream(index: try CountryIndex.bundled(), places: nil)
        #expect {
            try stream.run(input: input, inputName: "a directory", output: STDOUT_FILENO) { _, _ in }
        } throws: { error in
            String(describing: error).hasPrefix("cannot read a directory: ")
        }
    }

    @Test("output that cannot be written: an error that says so")
    func unwritableOutput() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { for end in ends { close(end) } }
        let input = try GeocodeRun.file(with: "48.8566,2.3522\n")
        defer { close(input) }
        let stream = GeocodeStream(index: try CountryIndex.bundled(), places: nil)
        // The pipe's reading end takes no writes.
        #expect {
            try stream.run(input: input, inputName: "points", output: ends[0]) { _, _ in }
        } throws: { error in
            String(describing: error).hasPrefix("cannot write the output: ")
        }
    }
}

/// One run of a stream over `lines` from a file into a file: the answers by line and what was reported.
private struct GeocodeRun {
    var lines: [String] = []
    var malformedCount = 0
    var reported: [(line: Int, text: String)] = []

    init(lines input: [String], stream: GeocodeStream, finalNewline: Bool = true) throws {
        let text = input.joined(separator: "\n") + (finalNewline ? "\n" : "")
        let inputFile = try Self.file(with: text)
        defer { close(inputFile) }
        let outputFile = try Self.file(with: "")
        defer { close(outputFile) }
        var reported: [(line: Int, text: String)] = []
        malformedCount = try stream.run(input: inputFile, inputName: "points", output: outputFile) { line, text in
            reported.append((line, text))
        }
        self.reported = reported
        lseek(outputFile, 0, SEEK_SET)
        let output = FileHandle(fileDescriptor: outputFile, closeOnDealloc: false).readDataToEndOfFile()
        lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }

    /// A descriptor of a new unnamed file holding `text`, read from its start.
    static func file(with text: String) throws -> Int32 {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("geocode-\(UUID().uuidString)").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let file = open(path, O_RDWR)
        unlink(path)
        guard file >= 0 else { throw GeocodeError("cannot open \(path)") }
        return file
    }
}
