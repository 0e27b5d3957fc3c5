import GeoCore
import Kafka
import Testing

@testable import Worker

/// Dead-letter records: the original as it came, or its first bytes with what was cut said in headers.
@Suite("Dead letters", .timeLimit(.minutes(5)))
struct DeadLetterTests {
    let origin = MessageOrigin(topic: "positions", partition: 3, offset: 42, timestamp: 0)

    func record(value: String?, key: String?, limits: DeadLetter.Limits) -> ProducerRecord {
        func withBytes<R>(_ text: String?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
            guard let text else { return body(nil) }
            return Array(text.utf8).withUnsafeBytes { body($0) }
        }
        return withBytes(value) { value in
            withBytes(key) { key in
                DeadLetter.record(
                    topic: "dead",
                    value: value,
                    key: key,
                    origin: origin,
                    reason: "invalid-json",
                    error: "not JSON",
                    limits: limits
                )
            }
        }
    }

    func headers(_ record: ProducerRecord) -> [String: String] {
        Dictionary(record.headers.map { ($0.name, String(decoding: $0.value ?? [], as: UTF8.self)) }) { $1 }
    }

    @Test("within the limits: the original key and value, the reason, the error and the origin")
    func whole() {
        let letter = record(value: "abc", key: "truck-1", limits: DeadLetter.Limits(maxValueBytes: 3, maxKeyBytes: 7))
        #expect(letter.topic == "dead")
        #expect(letter.value == Array("abc".utf8) && letter.key == Array("truck-1".utf8))
        #expect(
            headers(letter) == [
                "geoworker-reason": "invalid-json", "geoworker-error": "not JSON", "geoworker-origin": "positions:3:42",
            ]
        )
    }

    @Test("over a limit: the first bytes, marked truncated, with the whole original's size and SHA-256")
    func truncated() {
        let letter = record(value: "abc", key: "abc", limits: DeadLetter.Limits(maxValueBytes: 2, maxKeyBytes: 1))
        #expect(letter.value == Array("ab".utf8))
        #expect(letter.key == Array("a".utf8))
        let sha256OfABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        let found = headers(letter)
        #expect(found["geoworker-truncated"] == "true")
        #expect(found["geoworker-original-size"] == "3")
        #expect(found["geoworker-original-sha256"] == sha256OfABC)
        #expect(found["geoworker-key-truncated"] == "true")
        #expect(found["geoworker-original-key-size"] == "3")
        #expect(found["geoworker-original-key-sha256"] == sha256OfABC)
        #expect(found["geoworker-reason"] == "invalid-json")
    }

    @Test("a tombstone or a keyless message stays so")
    func absent() {
        let letter = record(value: nil, key: nil, limits: DeadLetter.Limits(maxValueBytes: 1, maxKeyBytes: 1))
        #expect(letter.value == nil && letter.key == nil)
        #expect(headers(letter)["geoworker-truncated"] == nil)
    }

    @Test(
        "under the default limits, a dead letter of a message of any size fits the producer's message.max.bytes",
        arguments: [1_000_000, 100_000]
    )
    func defaultsFit(messageMaxBytes: Int) {
        let limits = messageMaxBytes == 1_000_000 ? DeadLetter.Limits() : .defaults(messageMaxBytes: messageMaxBytes)
        let huge = String(repeating: "x", count: 3 * messageMaxBytes)
        let letter = record(value: huge, key: String(repeating: "k", count: messageMaxBytes), limits: limits)
        // What a record costs the broker beyond key, value and headers: varints, attributes, the batch header.
        let framing = 128
        let size =
            (letter.value?.count ?? 0) + (letter.key?.count ?? 0)
            + letter.headers.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) + 8 } + framing
        #expect(size <= messageMaxBytes, "a \(size)-byte dead letter over message.max.bytes \(messageMaxBytes)")
        #expect((letter.value?.count ?? 0) >= messageMaxBytes / 2, "most of the room goes to the value")
    }
}
