// The geocode part of service-bench: `geoworker geocode --input` on random coordinates, as a whole process.
import BenchSupport
import Foundation
import GeoCore
import TestSupport

/// `geoworker geocode --input` as a whole process (see the top of main.swift).
func measureGeocode() {
    let lineCount = 2_000_000
    var random = SplitMix64(seed: 18)
    var text: [UInt8] = []
    text.reserveCapacity(lineCount * 24)
    for _ in 0..<lineCount {
        let latitude = Double.random(in: -90...90, using: &random)
        let longitude = Double.random(in: -180...180, using: &random)
        text.append(contentsOf: String(format: "%.6f,%.6f\n", latitude, longitude).utf8)
    }
    let input = stateRoot + "-geocode.txt"
    guard FileManager.default.createFile(atPath: input, contents: Data(text)) else { fail("cannot write \(input)") }
    defer { try? FileManager.default.removeItem(atPath: input) }
    /// Lines per second of one whole `geocode --input` process of `executable`.
    func geocodeRate(_ executable: String) -> Double {
        let started = ContinuousClock.now
        let process: BackgroundProcess
        do {
            process = try BackgroundProcess(executable, ["geocode", "--input", input], keepOutput: true)
        } catch {
            fail("cannot start geoworker geocode: \(error)")
        }
        guard process.waitUntilExit() == .exited(0) else { fail("geocode failed:\n\(process.errors.suffix(2000))") }
        let seconds = (ContinuousClock.now - started).seconds
        let lines = process.output.utf8.count { $0 == UInt8(ascii: "\n") }
        guard lines == lineCount else { fail("geocode wrote \(lines) lines for \(lineCount)") }
        return Double(lineCount) / seconds
    }
    func millions(_ rates: [Double]) -> String {
        rates.map { String(format: "%.2f", $0 / 1e6) }.joined(separator: ", ")
    }
    var rates: [Double] = []
    var baselineRates: [Double] = []
    for _ in 0..<3 {
        rates.append(geocodeRate(geoworker))
        if let baseline = options.baseline { baselineRates.append(geocodeRate(baseline)) }
    }
    log(
        String(
            format: "geocode --input, whole process, %d random lines: %.2f M lines/s (best of 3: %@) (target 5)",
            lineCount,
            rates.max()! / 1e6,
            millions(rates)
        )
            + (baselineRates.isEmpty
                ? ""
                : String(
                    format: "; baseline, alternating: %.2f M lines/s (%@)",
                    baselineRates.max()! / 1e6,
                    millions(baselineRates)
                ))
    )
}
