import Foundation

/// What one instance tells the rest of its group on the instances topic (`topics.instances`): where its operations
/// port answers, and which input partitions it holds now.
///
/// librdkafka 2.0.2 cannot put an address into the group's member metadata, and the group's description names no port,
/// so each instance writes its own record, keyed by its instance name, whenever its assignment changes (and every
/// ``GroupPresence/refreshInterval``); a graceful stop writes a tombstone. Every instance reads the whole topic
/// (``GroupDirectory``).
public struct InstanceAdvert: Hashable, Sendable, Codable {
    /// The instance's name: its `groupInstanceId`, else a name of its own for this run.
    public let instance: String
    /// Where its operations port answers, as other instances reach it (`http.advertisedAddress`).
    public let address: String
    /// The input partitions it holds, ascending.
    public let partitions: [Int32]
    /// The input topics' partition count, as the instance found it.
    public let partitionCount: Int
    /// When the instance wrote it (milliseconds since the epoch): of two adverts that claim a partition, the later
    /// one's holder is the current one.
    public let at: Int64

    public init(instance: String, address: String, partitions: [Int32], partitionCount: Int, at: Int64) {
        self.instance = instance
        self.address = address
        self.partitions = partitions.sorted()
        self.partitionCount = partitionCount
        self.at = at
    }

    /// The record's value.
    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return Array((try? encoder.encode(self)) ?? Data())
    }

    /// The advert in a record's value; nil for anything else (a record another program wrote, or a newer form).
    static func decode(_ value: [UInt8]) -> InstanceAdvert? {
        guard let advert = try? JSONDecoder().decode(InstanceAdvert.self, from: Data(value)),
            !advert.instance.isEmpty, !advert.address.isEmpty, advert.partitionCount > 0
        else { return nil }
        return advert
    }
}
