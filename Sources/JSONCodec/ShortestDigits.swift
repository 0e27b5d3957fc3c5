/// Takes the text of a number from `Double.write(to:)`, the standard library's shortest round-trip digits, into the
/// writer's room: `description` made a String of it, allocated for the 16 or more characters of a computed double.
///
/// `Double.write(to:)` hands its bytes to `_writeASCII`, the stream protocol's requirement for ASCII text (checked
/// against `description` on 300,000 random doubles of every magnitude by the tests); `write(_:)` takes them should
/// it ever pass a String instead.
struct ShortestDigits: TextOutputStream {
    /// The longest text a finite double has: `-2.2250738585072014e-308`.
    static let maximumLength = 24

    private let destination: UnsafeMutablePointer<UInt8>
    private(set) var count = 0

    init(into destination: UnsafeMutablePointer<UInt8>) {
        self.destination = destination
    }

    mutating func write(_ string: String) {
        var string = string
        string.withUTF8 { _writeASCII($0) }
    }

    mutating func _writeASCII(_ buffer: UnsafeBufferPointer<UInt8>) {
        let length = min(buffer.count, Self.maximumLength - count)
        guard let base = buffer.baseAddress, length > 0 else { return }
        (destination + count).update(from: base, count: length)
        count += length
    }
}
