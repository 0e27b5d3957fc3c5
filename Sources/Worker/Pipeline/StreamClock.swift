/// Each partition pair's stream time: the newest message time the merge released of the pair since it last started.
///
/// What a device's silence is decided by (``DeviceRegistry/announceSilences(inPartition:upTo:events:)``), so that the
/// same input gives the same `device.silent` events however it was batched or replayed. A pair starts with an
/// assignment and again at a rewind.
///
/// A pair's time only moves forward: a message stamped earlier than one released before it does not take it back.
/// It starts afresh with the pair, from the first message released after the start; a replay from an older offset
/// reaches the times of the first run again as it goes.
struct StreamClock {
    /// A pair's stream time, moved forward since the last ``takeAdvances()``.
    struct Advance: Equatable, Sendable {
        let partition: Int32
        /// Milliseconds since the epoch.
        let time: Int64
    }

    /// Each pair's time at its partition number; `Int64.min` while nothing was released of it.
    private var times: [Int64] = []
    /// The pairs whose time moved since ``takeAdvances()``, each once, in the order they first moved.
    private var moved: [Int32] = []

    /// The pair of `partition` released messages stamped up to `newest`.
    mutating func released(upTo newest: Int64, partition: Int32) {
        let pair = Int(partition)
        if pair >= times.count { times += Array(repeating: Int64.min, count: pair + 1 - times.count) }
        guard newest > times[pair] else { return }
        if !moved.contains(partition) { moved.append(partition) }
        times[pair] = newest
    }

    /// The pair's time, if anything was released of it since it started.
    func time(of partition: Int32) -> Int64? {
        let pair = Int(partition)
        return pair < times.count && times[pair] != Int64.min ? times[pair] : nil
    }

    /// The pairs whose time moved since the last call, with their time now; forgets them.
    mutating func takeAdvances() -> [Advance] {
        defer { moved.removeAll(keepingCapacity: true) }
        return moved.map { Advance(partition: $0, time: times[Int($0)]) }
    }

    /// The pair starts again (revoked, or read again from an older offset): its time comes from what is released next.
    mutating func restart(partition: Int32) {
        let pair = Int(partition)
        if pair < times.count { times[pair] = Int64.min }
        moved.removeAll { $0 == partition }
    }

    /// Every pair starts again (a rewind).
    mutating func restartAll() {
        times = []
        moved = []
    }
}
