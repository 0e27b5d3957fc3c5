import Synchronization

/// A boolean that threads share by reference (a loop on one thread, its stop request on another).
final class AtomicFlag: Sendable {
    private let storage: Atomic<Bool>

    init(_ value: Bool) { storage = Atomic(value) }

    var value: Bool { storage.load(ordering: .acquiring) }

    func set(_ value: Bool) { storage.store(value, ordering: .releasing) }

    /// Sets the flag and returns what it was before.
    func exchange(_ value: Bool) -> Bool { storage.exchange(value, ordering: .acquiringAndReleasing) }
}
