/// Records for one topic, all with the same headers, their keys and values laid end to end in one buffer.
///
/// A producer of many small records (the worker's events) writes each one in place and sends them all with
/// one ``Producer/send(_:)-(RecordBuffer)`` call: no array per key and value, no ``ProducerRecord`` per
/// message, and the headers are made once for the whole buffer. Emptied with ``removeAll()``, the buffer
/// keeps its storage for the next records.
public struct RecordBuffer: Sendable {
    public let topic: String
    /// The headers every record carries.
    public let headers: [KafkaHeader]
    /// The keys and values, back to back.
    private var bytes: [UInt8] = []
    /// Where each record's key and value are in `bytes`: the key from `start` to `valueStart`, the value from
    /// there to `end`.
    private var bounds: [(start: Int, valueStart: Int, end: Int)] = []

    public init(topic: String, headers: [KafkaHeader] = []) {
        self.topic = topic
        self.headers = headers
    }

    /// The number of records.
    public var count: Int { bounds.count }
    public var isEmpty: Bool { bounds.isEmpty }
    /// The bytes of all keys and values.
    public var byteCount: Int { bytes.count }

    /// Appends a record: `key`'s bytes, then what `writeValue` appends to the buffer (the value).
    ///
    /// Records without a key or with a null value are not what this buffer is for: use ``ProducerRecord``.
    public mutating func append(key: String, value writeValue: (inout [UInt8]) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: key.utf8)
        let valueStart = bytes.count
        writeValue(&bytes)
        precondition(bytes.count >= valueStart, "a value writer removed bytes it did not append")
        bounds.append((start, valueStart, bytes.count))
    }

    /// The key of record `index`.
    public func key(at index: Int) -> ArraySlice<UInt8> { bytes[bounds[index].start..<bounds[index].valueStart] }

    /// The value of record `index`.
    public func value(at index: Int) -> ArraySlice<UInt8> { bytes[bounds[index].valueStart..<bounds[index].end] }

    /// A buffer of the last `count` records (all when there are fewer), their bytes copied in one piece.
    public func suffix(_ count: Int) -> RecordBuffer {
        var tail = RecordBuffer(topic: topic, headers: headers)
        let first = max(0, bounds.count - max(0, count))
        guard first < bounds.count else { return tail }
        let start = bounds[first].start
        tail.bytes = Array(bytes[start...])
        tail.bounds = bounds[first...].map { ($0.start - start, $0.valueStart - start, $0.end - start) }
        return tail
    }

    /// The records one by one (each copied out: for inspection, not for the hot path).
    public var records: [ProducerRecord] {
        (0..<count).map {
            ProducerRecord(topic: topic, key: Array(key(at: $0)), value: Array(value(at: $0)), headers: headers)
        }
    }

    /// Forgets the records and keeps the storage.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        bounds.removeAll(keepingCapacity: true)
    }

    /// Calls `body` with the key and value of each record from `start` on, in order, in place, until it returns
    /// false; returns the index of the record it returned false for (`count` when it never did).
    func forEachRecord(
        from start: Int,
        _ body: (_ index: Int, _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> Bool
    ) -> Int {
        bytes.withUnsafeBytes { all in
            bounds.withUnsafeBufferPointer { bounds in
                for index in start..<bounds.count {
                    let record = bounds[index]
                    let key = UnsafeRawBufferPointer(rebasing: all[record.start..<record.valueStart])
                    let value = UnsafeRawBufferPointer(rebasing: all[record.valueStart..<record.end])
                    if !body(index, key, value) { return index }
                }
                return bounds.count
            }
        }
    }
}
