import Foundation
import JSONCodec

// The codec alone, on one core, with no geoworker type: reading objects member by member (numbers correctly
// rounded), numbers of 6 decimals and of 17 digits, RFC 3339 times both ways, and writing numbers and strings. Each figure is the best of five passes over a million items.
//
// `swift run -c release json-codec-bench` (part of `make bench`).

let count = 1_000_000

func best(of passes: Int = 5, _ body: () -> Void) -> Double {
    var times: [Double] = []
    for _ in 0..<passes {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return times.min()!
}

func report(_ label: String, seconds: Double) {
    let rate = Double(count) / seconds
    let padded = label.padding(toLength: 56, withPad: " ", startingAt: 0)
    print(padded + String(format: "%7.2f M/s  %6.1f ns each", rate / 1e6, seconds * 1e9 / Double(count)))
}

/// A random generator of its own (SplitMix64), so that every run reads the same texts.
struct Random {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

/// `count` texts laid end to end, and where each one is.
func texts(_ make: (inout Random, Int) -> String) -> (bytes: [UInt8], bounds: [Range<Int>]) {
    var random = Random(state: 7)
    var bytes: [UInt8] = []
    var bounds: [Range<Int>] = []
    for index in 0..<count {
        let start = bytes.count
        bytes += make(&random, index).utf8
        bounds.append(start..<bytes.count)
    }
    return (bytes, bounds)
}

/// Reads each text with `read`, and checks the sum of what it returned did not vanish.
func timeReading(
    _ label: String,
    _ input: (bytes: [UInt8], bounds: [Range<Int>]),
    _ read: (UnsafeRawBufferPointer) -> Double
) {
    var checksum = 0.0
    let seconds = input.bytes.withUnsafeBytes { all in
        best {
            for range in input.bounds { checksum += read(UnsafeRawBufferPointer(rebasing: all[range])) }
        }
    }
    precondition(checksum != 0)
    report(label, seconds: seconds)
}

/// The members of the objects read below, told apart by their names' lengths and letters.
enum Member {
    case id, lat, lon, time, accuracy

    init?(_ name: UnsafeRawBufferPointer) {
        switch (name.count, name.first) {
        case (2, UInt8(ascii: "i")): self = .id
        case (3, UInt8(ascii: "l")): self = name[2] == UInt8(ascii: "t") ? .lat : .lon
        case (4, UInt8(ascii: "t")): self = .time
        case (8, UInt8(ascii: "a")): self = .accuracy
        default: return nil
        }
    }
}

let objects = texts { random, index in
    #"{"id":"item-\#(index % 50_000)","lat":\#((random.unit() * 180 - 90) * 1e6 .rounded() / 1e6),"#
        + #""lon":\#((random.unit() * 360 - 180) * 1e6 .rounded() / 1e6),"time":"2026-11-27T10:00:00.\#(index % 1000)Z","#
        + #""accuracy":12.5,"extra":[1,2,{"a":null}]}"#
}
timeReading("objects of six members, names told apart, values read", objects) { bytes in
    var scanner = JSONScanner(bytes)
    var sum = 0.0
    do {
        guard try scanner.enterObject() else { return 0 }
        var first = true
        while let key = try scanner.nextKey(first: first) {
            first = false
            switch Member(scanner.content(of: key)) {
            case .lat, .lon, .accuracy: sum += try scanner.readNumber() ?? 0
            case .id, .time: _ = try scanner.readRawString()
            case nil: try scanner.skipValue(depth: 1)
            }
        }
        try scanner.expectEnd()
    } catch { return 0 }
    return sum
}

let sixDecimals = texts { random, _ in "\(((random.unit() * 360 - 180) * 1e6).rounded() / 1e6)" }
timeReading("numbers, 6 decimals", sixDecimals) { bytes in
    (try? DecimalNumber.scan(bytes, from: 0, grammar: .json).value) ?? 1
}
let fullDigits = texts { random, _ in "\(random.unit() * 360 - 180)" }
timeReading("numbers, 17 significant digits (Eisel-Lemire)", fullDigits) { bytes in
    (try? DecimalNumber.scan(bytes, from: 0, grammar: .json).value) ?? 1
}
let times = texts { _, index in RFC3339.string(1_795_000_000_000 + Int64(index) * 1_013) }
timeReading("RFC 3339 times read", times) { bytes in Double(RFC3339.parse(bytes) ?? 1) }

var writerRandom = Random(state: 11)
let values = (0..<count).map { _ in ((writerRandom.unit() * 360 - 180) * 1e6).rounded() / 1e6 }
let fullValues = (0..<count).map { _ in writerRandom.unit() * 360 - 180 }
for (label, numbers) in [("numbers written, 6 decimals", values), ("numbers written, 17 digits", fullValues)] {
    var written = 0
    report(
        label,
        seconds: best {
            var writer = JSONWriter()
            writer.beginArray()
            for value in numbers { writer.number(value) }
            writer.endArray()
            written = writer.takeOutput().count
        }
    )
    precondition(written > count)
}
var timesWritten = 0
report(
    "RFC 3339 times written",
    seconds: best {
        var writer = JSONWriter()
        writer.beginArray()
        for index in 0..<count { writer.timestamp(1_795_000_000_000 + Int64(index) * 1_013) }
        writer.endArray()
        timesWritten = writer.takeOutput().count
    }
)
precondition(timesWritten > count)
let names = (0..<1000).map { "device \($0) \"quoted\" é" }
var stringsWritten = 0
report(
    "strings written, with escapes and non-ASCII",
    seconds: best {
        var writer = JSONWriter()
        writer.beginArray()
        for index in 0..<count { writer.string(names[index % names.count]) }
        writer.endArray()
        stringsWritten = writer.takeOutput().count
    }
)
precondition(stringsWritten > count)
