import Foundation
import GeoCore

/// libFuzzer entry point for the parsers of untrusted input: the position and command decoders (every
/// byte of the input topics), the RFC 3339 timestamp parser, `geoworker geocode`'s `lat,lon` lines and the
/// device-state decoder (every changelog record another process wrote).
///
/// `GEOWORKER_FUZZ` picks the parser: `position`, `command`, `timestamp`, `geocode-line` or `device-state`. Built with
/// `-sanitize=fuzzer,address -DFUZZING` (`make fuzz`), libFuzzer drives it; built plainly, it is a replayer
/// that runs the files it is given (a corpus, a crash) through the same checks. Beyond not crashing, each
/// parser's output must keep the promises the worker relies on.
enum FuzzTarget: String, CaseIterable {
    case position
    case command
    case timestamp
    case geocodeLine = "geocode-line"
    case deviceState = "device-state"

    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["GEOWORKER_FUZZ"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            let names = allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("GEOWORKER_FUZZ must be one of \(names) (got '\(name)')\n".utf8))
            exit(2)
        }
        return target
    }()

    /// The position target's decoder, kept from one input to the next (libFuzzer runs them one at a time).
    nonisolated(unsafe) private static var decoder = InputDecoder()

    func check(_ bytes: UnsafeRawBufferPointer) {
        switch self {
        case .position:
            let decoded = Position.decode(json: bytes)
            // The worker decodes through a decoder that remembers the last input's languages list; the
            // result must be what the input gives alone, whatever came before it.
            let remembering = InputMessage.decode(json: bytes, as: .positions, by: &Self.decoder)
            precondition(remembering == decoded.map(InputMessage.position))
            guard case .success(let position) = decoded else { return }
            precondition(!position.deviceId.isEmpty && position.deviceId.utf8.count <= Position.maximumDeviceIdLength)
            precondition((Timestamp.earliest...Timestamp.latest).contains(position.timestamp))
        case .command:
            guard case .success(let command) = DeviceCommand.decode(json: bytes) else { return }
            precondition(!command.deviceId.isEmpty && command.deviceId.utf8.count <= Position.maximumDeviceIdLength)
            if case .track(_, let pin) = command {
                // What was decoded can be built again: the decoder enforces the pin's own rules.
                precondition(Pin(id: pin.id, shape: pin.shape, title: pin.title, metadataJSON: pin.metadataJSON) != nil)
            }
            // Written as a command (as `geoworker pins` does) and read again, the same command.
            let written = command.json
            precondition(written.withUnsafeBytes { DeviceCommand.decode(json: $0) } == .success(command))
        case .timestamp:
            // Any 64-bit instant (a Kafka timestamp) is written as valid text, clamped to what RFC 3339 can say.
            if bytes.count >= 8 {
                let instant = bytes.loadUnaligned(as: Int64.self)
                let written = Array(Timestamp.rfc3339(instant).utf8)
                let clamped = min(max(instant, Timestamp.firstWritable), Timestamp.latest)
                precondition(written.withUnsafeBytes(Timestamp.parseRFC3339) == clamped)
            }
            guard let milliseconds = Timestamp.parseRFC3339(bytes) else { return }
            // Written back in UTC and read again, the same instant.
            var text: [UInt8] = []
            Timestamp.appendRFC3339(milliseconds, to: &text)
            precondition(text.withUnsafeBytes(Timestamp.parseRFC3339) == milliseconds)
        case .geocodeLine:
            guard let coordinate = Coordinate(latLon: Array(bytes)[...]) else { return }
            // Swift prints doubles so that they read back exactly.
            let again = Coordinate(latLon: Array("\(coordinate.latitude),\(coordinate.longitude)".utf8)[...])
            precondition(again == coordinate)
        case .deviceState:
            guard let state = try? DeviceStateEncoding.decode(bytes) else { return }
            // Whatever decodes is a state the worker could have written, and writes back to the same bytes
            // (one encoding per state: a restore stores what it reads).
            precondition(!state.deviceId.isEmpty)
            let written = DeviceStateEncoding.encode(state)
            if bytes.first == DeviceStateEncoding.version || bytes.first == DeviceStateEncoding.versionWithActivity
                || bytes.first == DeviceStateEncoding.versionWithoutCatalog
            {
                // A polygon's vertices are kept to 1e-7 degree: one written finer (by an older worker, or here)
                // comes back rounded, and from then on the same.
                let rounded = state.pins.contains { if case .polygon = $0.pin.shape { true } else { false } }
                precondition(
                    written.elementsEqual(bytes) || (rounded && (try? DeviceStateEncoding.decode(written)) == state)
                )
            } else {
                // An older version is written back as the current one, holding the same state.
                precondition((try? DeviceStateEncoding.decode(written)) == state)
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.selected.check(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

#if FUZZING
/// libFuzzer's driver, called from the executable's own entry point (SwiftPM names every executable's entry
/// point itself, so libFuzzer's `main` cannot be it).
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

@main
enum Fuzz {
    static func main() {
        _ = FuzzTarget.selected
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
    }
}
#else
/// Without libFuzzer: runs every file named on the command line (files of a directory too) through the
/// selected parser's checks, so a corpus or a crash found by the fuzzer replays in a plain build.
@main
enum Replay {
    static func main() {
        var count = 0
        for argument in CommandLine.arguments.dropFirst() {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else { continue }
            let files =
                isDirectory.boolValue
                ? ((try? FileManager.default.contentsOfDirectory(atPath: argument)) ?? []).map { argument + "/" + $0 }
                : [argument]
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else { continue }
                data.withUnsafeBytes { FuzzTarget.selected.check($0) }
                count += 1
            }
        }
        print("replayed \(count) inputs through \(FuzzTarget.selected.rawValue)")
    }
}
#endif
