#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The languages list a decoder read last, with its JSON text.
///
/// A fleet's devices send the same list in message after message, and each decoded list used to be an array of
/// its own, allocated, compared with the device's and let go. A decoder that keeps the last list hands it out
/// again to the next message with the same text: no allocation, and a device that already holds the list finds
/// it equal by identity (`Array`'s `==` compares storage first). The same text reads as the same list: a JSON
/// array ends at its closing bracket, so input that starts with a valid array's exact text holds that array.
/// One list only: a fleet whose messages alternate between lists gets each anew, as before, plus a compare.
struct RecentLanguages: Sendable {
    /// The array's text, from `[` to `]`.
    private(set) var text: [UInt8] = []
    private(set) var tags: [String] = []

    /// Remembers nothing yet.
    init() {}

    /// Remembers `tags`, read from `text`; the text goes into the storage of the last one's.
    mutating func remember(_ tags: [String], text: UnsafeRawBufferPointer) {
        self.text.removeAll(keepingCapacity: true)
        self.text.append(contentsOf: text)
        self.tags = tags
    }

    /// The list, when `input` starts with its text.
    func tags(atStartOf input: UnsafeRawBufferPointer) -> [String]? {
        guard !text.isEmpty, input.count >= text.count else { return nil }
        let same = text.withUnsafeBytes { memcmp($0.baseAddress!, input.baseAddress!, text.count) == 0 }
        return same ? tags : nil
    }
}
