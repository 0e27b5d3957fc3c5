/// The buckets the apply threads' fixes entered, waiting for the address service to look at them: each once, the
/// newest `capacity` kept, an older one overwritten (and counted) when more come than the service takes.
///
/// When the provider is slower than the fixes enter buckets (always, at 1 request a second, on a catch-up), the newest
/// fixes are the ones worth an address; what overflows costs the apply thread a store, never a wait.
package struct PrefetchBuffer {
    package let capacity: Int
    private var buckets: [AddressBucket] = []
    /// The buckets waiting, so that a bucket many fixes enter waits once.
    private var waiting: Set<AddressBucket> = []
    /// Where the next bucket goes once the buffer is full: the oldest one's place.
    private var oldest = 0

    /// What became of a bucket added.
    package enum Addition: Equatable {
        case added
        /// It was waiting already.
        case waiting
        /// Added in the place of the oldest, which is dropped.
        case addedDroppingOldest
    }

    package init(capacity: Int) {
        precondition(capacity > 0, "a prefetch buffer holds at least one bucket")
        self.capacity = capacity
    }

    package var isEmpty: Bool { buckets.isEmpty }

    package mutating func add(_ bucket: AddressBucket) -> Addition {
        guard waiting.insert(bucket).inserted else { return .waiting }
        guard buckets.count == capacity else {
            buckets.append(bucket)
            return .added
        }
        waiting.remove(buckets[oldest])
        buckets[oldest] = bucket
        oldest = (oldest + 1) % capacity
        return .addedDroppingOldest
    }

    /// Everything waiting, the oldest first; the buffer is left empty.
    package mutating func take() -> [AddressBucket] {
        defer {
            buckets.removeAll(keepingCapacity: true)
            waiting.removeAll(keepingCapacity: true)
            oldest = 0
        }
        return Array(buckets[oldest...] + buckets[..<oldest])
    }
}
