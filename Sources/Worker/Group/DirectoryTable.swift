/// The group's instances as their adverts on the instances topic tell them: each instance's latest advert, and from
/// those, who holds which input partition.
///
/// A partition's holder is the instance whose latest advert claims it, the latest advert of two that both do (an
/// instance killed before it said it gave the partition up, and the one that took it over since). A partition no
/// advert claims is moving between instances, or its holder has not said yet.
struct DirectoryTable: Sendable {
    /// Each instance's latest advert, by its name.
    private(set) var adverts: [String: InstanceAdvert] = [:]

    /// Takes `advert` unless an advert of its instance written later is already in.
    mutating func apply(_ advert: InstanceAdvert) {
        if let known = adverts[advert.instance], known.at > advert.at { return }
        adverts[advert.instance] = advert
    }

    /// Forgets an instance (its tombstone: it stopped).
    mutating func forget(_ instance: String) {
        adverts[instance] = nil
    }

    /// Who holds `partition` now; nil when nobody claims it.
    func holder(of partition: Int32) -> InstanceAdvert? {
        adverts.values.filter { $0.partitions.contains(partition) }.max { ($0.at, $0.instance) < ($1.at, $1.instance) }
    }

    /// The input topics' partition count, by the latest advert; nil before any.
    var partitionCount: Int? {
        adverts.values.max { ($0.at, $0.instance) < ($1.at, $1.instance) }?.partitionCount
    }

    /// Each instance that holds a partition now, with the partitions it holds (which may be fewer than its advert
    /// claims, where a later advert took some), in name order.
    func holders() -> [(advert: InstanceAdvert, holds: [Int32])] {
        guard let count = partitionCount else { return [] }
        var holds: [String: [Int32]] = [:]
        for partition in 0..<Int32(count) {
            if let holder = holder(of: partition) { holds[holder.instance, default: []].append(partition) }
        }
        return holds.keys.sorted().map { (adverts[$0]!, holds[$0]!) }
    }

    /// The partitions nobody claims now: moving between instances.
    func unheld() -> [Int32] {
        guard let count = partitionCount else { return [] }
        return (0..<Int32(count)).filter { holder(of: $0) == nil }
    }
}
