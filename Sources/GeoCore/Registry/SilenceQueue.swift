/// The devices of one input partition by the time they fall silent unless a fix comes first: a binary min-heap of
/// deadlines, one entry a device at most (its registry slot), so that the stream's time passing finds the devices it
/// silences without looking at the others.
///
/// An entry may be out of date (a fix moved the device's deadline on since): whoever pops it checks the device's
/// deadline again.
struct SilenceQueue: Sendable {
    private var entries: [(deadline: Int64, slot: Int32)] = []

    var isEmpty: Bool { entries.isEmpty }
    var count: Int { entries.count }

    /// The earliest deadline queued.
    var earliest: Int64? { entries.first?.deadline }

    mutating func push(_ deadline: Int64, slot: Int32) {
        entries.append((deadline, slot))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// The entry with the earliest deadline, taken out.
    mutating func pop() -> (deadline: Int64, slot: Int32)? {
        guard !entries.isEmpty else { return nil }
        entries.swapAt(0, entries.count - 1)
        let top = entries.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < entries.count else { break }
            let right = left + 1
            let child = right < entries.count && entries[right].deadline < entries[left].deadline ? right : left
            guard entries[child].deadline < entries[parent].deadline else { break }
            entries.swapAt(child, parent)
            parent = child
        }
        return top
    }
}
