import GeoCore
import Kafka
import Testing
import Worker

/// Dead-letter records: the original as it came, or its first bytes with what was cut said in headers.
@Suite("Dead letters")
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

    @Test("the default limits leave room under the producer's message.max.bytes for the key and the headers")
    func defaults() {
        let standard = DeadLetter.Limits()
        #expect(standard == DeadLetter.Limits.defaults(messageMaxBytes: 1_000_000))
        #expect(standard.maxKeyBytes == 16_384)
        #expect(standard.maxValueBytes + standard.maxKeyBytes + DeadLetter.Limits.headroom == 1_000_000)
        let small = DeadLetter.Limits.defaults(messageMaxBytes: 100_000)
        #expect(small.maxValueBytes + small.maxKeyBytes + DeadLetter.Limits.headroom <= 100_000)
    }
}
