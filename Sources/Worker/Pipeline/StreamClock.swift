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
        /// The wall clock standing in for an idle pair's time (``idleAdvances(partitions:isIdle:now:wallTime:idleAfter:)``),
        /// not a message's.
        var byWallClock = false
    }

    /// Each pair's time at its partition number; `Int64.min` while nothing was released of it.
    private var times: [Int64] = []
    /// The pairs whose time moved since ``takeAdvances()``, each once, in the order they first moved.
    private var moved: [Int32] = []
    /// Since when each pair has released nothing: its last release, or when it was first found idle with nothing
    /// released since it started.
    private var quietSince: [ContinuousClock.Instant?] = []
    /// The wall-clock time last handed out for each idle pair (`Int64.min`: none since it released).
    private var wallTimes: [Int64] = []
    /// When the pairs were last looked at for idleness: once a second is enough.
    private var idleCheckedAt: ContinuousClock.Instant?

    /// Whether the pairs are due to be looked at for idleness (once a second), at `now`; notes it.
    mutating func isIdleCheckDue(at now: ContinuousClock.Instant) -> Bool {
        if let checked = idleCheckedAt, now - checked < .seconds(1) { return false }
        idleCheckedAt = now
        return true
    }

    /// The pair of `partition` released messages stamped up to `newest`, at `now`.
    mutating func released(upTo newest: Int64, partition: Int32, at now: ContinuousClock.Instant) {
        let pair = Int(partition)
        grow(to: pair)
        quietSince[pair] = now
        wallTimes[pair] = Int64.min
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

    /// The wall clock, for the sweep of each idle pair of `partitions`.
    ///
    /// Idle: `isIdle` (read to its end, nothing buffered) and nothing released for `idleAfter`. A partition that
    /// receives nothing moves no stream time, and its devices would never be announced silent. Only past its own
    /// stream time and the wall time it had last.
    ///
    /// Not a function of the input: a message that comes after an idle spell stamped earlier than the wall clock
    /// reached (a producer's clock behind, a backlog sent late) finds silences announced that a replay of the same
    /// input, which is never idle, announces only if the messages' own times pass them.
    mutating func idleAdvances(
        partitions: some Sequence<Int32>,
        isIdle: (Int32) -> Bool,
        now: ContinuousClock.Instant,
        wallTime: Int64,
        idleAfter: Duration
    ) -> [Advance] {
        var advances: [Advance] = []
        for partition in partitions {
            let pair = Int(partition)
            grow(to: pair)
            guard isIdle(partition) else {
                if times[pair] == Int64.min { quietSince[pair] = nil }  // not idle yet since it started
                continue
            }
            guard let since = quietSince[pair] else {
                quietSince[pair] = now
                continue
            }
            guard now - since >= idleAfter, wallTime > times[pair], wallTime > wallTimes[pair] else { continue }
            wallTimes[pair] = wallTime
            advances.append(Advance(partition: partition, time: wallTime, byWallClock: true))
        }
        return advances
    }

    /// The pair starts again (revoked, or read again from an older offset): its time comes from what is released next.
    mutating func restart(partition: Int32) {
        let pair = Int(partition)
        if pair < times.count {
            times[pair] = Int64.min
            quietSince[pair] = nil
            wallTimes[pair] = Int64.min
        }
        moved.removeAll { $0 == partition }
    }

    /// Every pair starts again (a rewind).
    mutating func restartAll() {
        times = []
        moved = []
        quietSince = []
        wallTimes = []
    }

    private mutating func grow(to pair: Int) {
        guard pair >= times.count else { return }
        let more = pair + 1 - times.count
        times += Array(repeating: Int64.min, count: more)
        quietSince += Array(repeating: nil, count: more)
        wallTimes += Array(repeating: Int64.min, count: more)
    }
}
