import Foundation
import GeoCore
import TestSupport

// MARK: 1. Decoding

let messageCount = 1_000_000
/// `messageCount` position messages in one buffer, and where each one is.
func makeMessages(fullPrecision: Bool) -> (payload: [UInt8], bounds: [Range<Int>]) {
    var random = SplitMix64(seed: 1)
    var payload: [UInt8] = []
    var bounds: [Range<Int>] = []
    payload.reserveCapacity(messageCount * 180)
    for index in 0..<messageCount {
        let start = payload.count
        var latitude = Double.random(in: 35...60, using: &random)
        var longitude = Double.random(in: -10...30, using: &random)
        if !fullPrecision {
            latitude = (latitude * 1e6).rounded() / 1e6
            longitude = (longitude * 1e6).rounded() / 1e6
        }
        let timestamp =
            index.isMultiple(of: 2)
            ? "\"\(Timestamp.rfc3339(1_795_000_000_000 + Int64(index) * 10))\""
            : "\(1_795_000_000_000 + Int64(index) * 10)"
        let text =
            #"{"deviceId":"truck-\#(index % 50_000)","lat":\#(latitude),"lon":\#(longitude),"timestamp":\#(timestamp),"#
            + #""accuracy":12.0,"speed":13.4,"heading":270\#(index % 10 == 0 ? #","languages":["fr-BE","en"]"# : "")}"#
        payload.append(contentsOf: text.utf8)
        bounds.append(start..<payload.count)
    }
    return (payload, bounds)
}

/// Decodes every message five times; returns the best time.
func timeDecoding(_ payload: [UInt8], _ bounds: [Range<Int>]) -> Double {
    var checksum = 0.0
    var times: [Double] = []
    for _ in 0..<5 {
        times.append(
            seconds {
                payload.withUnsafeBytes { bytes in
                    for range in bounds {
                        if case .success(let position) = Position.decode(
                            json: UnsafeRawBufferPointer(rebasing: bytes[range])
                        ) {
                            checksum += position.coordinate.latitude
                        } else {
                            fatalError("benchmark message failed to decode")
                        }
                    }
                }
            }
        )
    }
    precondition(checksum != 0)
    return times.min()!
}

/// Position messages decoded from their bytes: 6-decimal and 17-digit coordinates, and Foundation's JSONDecoder
/// on a sample of them for comparison.
func benchmarkDecoding() throws {
    let (payload, bounds) = makeMessages(fullPrecision: false)
    print("decode: \(messageCount) position messages, \(payload.count / messageCount) bytes each on average")
    report(
        "decode positions, 6-decimal coordinates (best of 5)",
        count: messageCount,
        seconds: timeDecoding(payload, bounds),
        unit: "positions"
    )
    let (fullPayload, fullBounds) = makeMessages(fullPrecision: true)
    report(
        "decode positions, 17-digit coordinates (best of 5)",
        count: messageCount,
        seconds: timeDecoding(fullPayload, fullBounds),
        unit: "positions"
    )

    struct FoundationPosition: Decodable {
        let deviceId: String
        let lat: Double
        let lon: Double
        let timestamp: Int64
        let accuracy: Double?
        let speed: Double?
        let heading: Double?
        let languages: [String]?
    }
    let foundationSample = bounds.prefix(100_000).enumerated().filter { $0.offset % 2 == 1 }.map {
        Data(payload[$0.element])
    }
    let decoder = JSONDecoder()
    var checksum = 0.0
    let foundationTime = try seconds {
        for data in foundationSample { checksum += try decoder.decode(FoundationPosition.self, from: data).lat }
    }
    precondition(checksum != 0)
    report(
        "Foundation JSONDecoder, for comparison (epoch-ms messages only)",
        count: foundationSample.count,
        seconds: foundationTime,
        unit: "positions"
    )
}
