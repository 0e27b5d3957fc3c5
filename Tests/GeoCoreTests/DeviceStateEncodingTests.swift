import GeoCore
import TestSupport
import Testing

@Suite("DeviceStateEncoding")
struct DeviceStateEncodingTests {
    @Test("every state comes back as it was, field for field, from its bytes")
    func roundTrip() throws {
        var random = SplitMix64(seed: 15)
        for _ in 0..<2_000 {
            let state = Self.randomState(&random)
            let bytes = DeviceStateEncoding.encode(state)
            #expect(try DeviceStateEncoding.decode(bytes) == state)
        }
    }

    @Test("a device with three pins takes under 200 bytes")
    func compact() {
        var state = DeviceState(deviceId: "truck-000017", languages: ["fr-BE", "en"], country: "BE")
        state.lastFix = Fix(
            coordinate: Coordinate(latitude: 50.85, longitude: 4.35)!,
            timestamp: 1_795_000_000_000,
            accuracy: 12
        )
        state.appliedOffsets = AppliedOffsets(positions: 1_234_567, commands: 89)
        for index in 0..<3 {
            let pin = Pin(id: "pin-\(index)", center: Coordinate(latitude: 50, longitude: 4)!, radius: 200)!
            state.pins.append(TrackedPin(pin: pin, membership: .outside))
        }
        let size = DeviceStateEncoding.encode(state).count
        #expect(size < 200, "\(size) bytes")
    }

    @Test("bytes cut short anywhere give an error, never a state")
    func truncated() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<50 {
            let bytes = DeviceStateEncoding.encode(Self.randomState(&random))
            for length in 0..<bytes.count {
                #expect(throws: DeviceStateDecodingError.self) {
                    try DeviceStateEncoding.decode(Array(bytes[..<length]))
                }
            }
        }
    }

    @Test("a newer version is named as such; trailing bytes, unknown flags and states are refused")
    func refused() throws {
        var bytes = DeviceStateEncoding.encode(DeviceState(deviceId: "d", pins: [TrackedPin(pin: Self.pin)]))
        var newer = bytes
        newer[0] = DeviceStateEncoding.version + 1
        let error = #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(newer) }
        #expect(error?.description.contains("newer geoworker") == true, "\(String(describing: error))")

        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(bytes + [0]) }

        var membership = bytes
        let stateIndex = try #require(membership.lastIndex(of: Membership.undetermined.rawValue))
        membership[stateIndex] = 7
        #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(membership) }

        // One encoding per value: a varint with a needless zero byte is refused (a restore stores the bytes as
        // they come, so two encodings of one state would differ on disk).
        let plain = DeviceStateEncoding.encode(DeviceState(deviceId: "d", inputPartition: 3))
        var padded = plain
        padded.replaceSubrange(3...3, with: [0x83, 0x00])
        let padding = #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(padded) }
        #expect(padding?.description.contains("not minimal") == true, "\(String(describing: padding))")

        // A count far beyond the bytes left is refused before anything is allocated for it.
        bytes = [DeviceStateEncoding.version, 1, UInt8(ascii: "d"), 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F]
        let count = #expect(throws: DeviceStateDecodingError.self) { try DeviceStateEncoding.decode(bytes) }
        #expect(count?.description.contains("cannot fit") == true, "\(String(describing: count))")
    }

    static let pin = Pin(id: "p", center: Coordinate(latitude: 1, longitude: 2)!, radius: 50)!

    static func randomState(_ random: inout SplitMix64) -> DeviceState {
        func text(_ random: inout SplitMix64, _ maximum: Int) -> String {
            let alphabet = Array("abcXYZ-_09éß€🚚 \"\\")
            return String(
                (0..<1 + random.next(below: maximum)).map { _ in alphabet[random.next(below: alphabet.count)] }
            )
        }
        func coordinate(_ random: inout SplitMix64) -> Coordinate {
            Coordinate(latitude: random.uniform(-90, 90), longitude: random.uniform(-180, 180))!
        }
        var state = DeviceState(deviceId: text(&random, 40))
        state.inputPartition = Int32(random.next(below: 3) == 0 ? Int(Int32.max) : random.next(below: 1000))
        state.appliedOffsets = AppliedOffsets(
            positions: random.next(below: 4) == 0 ? -1 : Int64(random.next() >> 2),
            commands: random.next(below: 4) == 0 ? -1 : Int64(random.next(below: 100_000))
        )
        if random.next(below: 5) != 0 {
            state.lastFix = Fix(
                coordinate: coordinate(&random),
                timestamp: Int64(bitPattern: random.next()) >> Int64(random.next(below: 64)),
                accuracy: random.next(below: 2) == 0 ? nil : random.uniform(0, 5_000)
            )
        }
        state.languages = (0..<random.next(below: 4)).map { _ in text(&random, 8) }
        state.country = random.next(below: 3) == 0 ? nil : text(&random, 2)
        state.countryCandidate = random.next(below: 3) == 0 ? text(&random, 2) : nil
        state.countryCandidateFixes = random.next(below: 5)
        for index in 0..<random.next(below: 6) {
            let pin = Pin(
                id: "\(index)-" + text(&random, 20),
                center: coordinate(&random),
                radius: random.uniform(1, 100_000),
                title: random.next(below: 2) == 0 ? nil : text(&random, 30),
                metadataJSON: random.next(below: 2) == 0 ? nil : #"{"k":"\#(text(&random, 10))"}"#
            )!
            let membership = Membership(rawValue: UInt8(random.next(below: 3)))!
            state.pins.append(TrackedPin(pin: pin, membership: membership))
        }
        return state
    }
}
