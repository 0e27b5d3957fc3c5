/// Finds a device's slot from its id with, in the common case, one cache miss.
///
/// Built for the hot path: `Dictionary<String, Int>` costs several cache misses per lookup once it holds
/// hundreds of thousands of devices (metadata, key and value live apart) plus SipHash. This table keeps
/// one 8-byte entry per device (a 32-bit hash tag and the slot), and a match is confirmed by comparing
/// the id stored in the slot itself, which the caller is about to use anyway. Open addressing with
/// linear probing, load factor at most 1/2. The hash is seeded at random per process, so crafted ids
/// cannot be made to collide on purpose.
struct DeviceIndex: Sendable {
    /// 0 for an empty entry, else `tag << 32 | (slot + 1)`.
    private var entries: [UInt64]
    private var count = 0
    /// How ids are hashed; a small value that closures can capture without the table.
    let hashing: IDHashing

    init(minimumCapacity: Int = 16) {
        var capacity = 16
        while capacity < minimumCapacity * 2 { capacity <<= 1 }
        entries = Array(repeating: 0, count: capacity)
        hashing = IDHashing.random()
    }

    /// The slot of `id`, where `idOfSlot` tells which id each slot holds.
    func slot(of id: String, hash: UInt64, idOfSlot: (Int) -> String) -> Int? {
        let mask = entries.count - 1
        let tag = hash >> 32
        var index = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = entries[index]
            if entry == 0 { return nil }
            if entry >> 32 == tag {
                let slot = Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
                if idOfSlot(slot) == id { return slot }
            }
            index = (index + 1) & mask
        }
    }

    /// Records that `slot` holds the id with this hash (an id not in the index yet).
    mutating func insert(slot: Int, hash: UInt64, rehash: (Int) -> UInt64) {
        if (count + 1) * 2 > entries.count { grow(rehash: rehash) }
        place(slot: slot, hash: hash)
        count += 1
    }

    private mutating func place(slot: Int, hash: UInt64) {
        let mask = entries.count - 1
        var index = Int(truncatingIfNeeded: hash) & mask
        while entries[index] != 0 { index = (index + 1) & mask }
        entries[index] = (hash >> 32) << 32 | UInt64(slot + 1)
    }

    private mutating func grow(rehash: (Int) -> UInt64) {
        let old = entries
        entries = Array(repeating: 0, count: old.count * 2)
        for entry in old where entry != 0 {
            let slot = Int(truncatingIfNeeded: entry & 0xFFFF_FFFF) - 1
            place(slot: slot, hash: rehash(slot))
        }
    }
}
