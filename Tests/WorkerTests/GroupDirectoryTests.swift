import Testing

@testable import Worker

/// Who holds which partition, as the group's adverts tell it (``DirectoryTable``), and the advert's address.
@Suite("the group's directory of instances")
struct GroupDirectoryTests {
    static func advert(_ instance: String, _ partitions: [Int32], at time: Int64) -> InstanceAdvert {
        InstanceAdvert(
            instance: instance,
            address: "http://\(instance):8080",
            partitions: partitions,
            partitionCount: 6,
            at: time
        )
    }

    @Test("the later of two claims holds a partition; a killed instance's last advert yields to its successor")
    func laterClaimWins() {
        var table = DirectoryTable()
        table.apply(Self.advert("a", [0, 1, 2, 3, 4, 5], at: 100))
        table.apply(Self.advert("b", [3, 4, 5], at: 200))
        #expect(table.holder(of: 3)?.instance == "b")
        #expect(table.holder(of: 0)?.instance == "a")
        #expect(table.unheld().isEmpty)
        #expect(table.holders().map(\.advert.instance) == ["a", "b"])
        #expect(table.holders().map(\.holds) == [[0, 1, 2], [3, 4, 5]])
    }

    @Test("an older advert read late does not replace a newer one of the same instance")
    func olderAdvertIgnored() {
        var table = DirectoryTable()
        table.apply(Self.advert("a", [], at: 300))
        table.apply(Self.advert("a", [0, 1], at: 100))
        #expect(table.holder(of: 0) == nil)
        #expect(table.unheld() == [0, 1, 2, 3, 4, 5])
    }

    @Test("an instance that stops (its tombstone) leaves its partitions moving until another claims them")
    func tombstoneLeavesPartitionsMoving() {
        var table = DirectoryTable()
        table.apply(Self.advert("a", [0, 1, 2], at: 100))
        table.apply(Self.advert("b", [3, 4, 5], at: 100))
        table.forget("b")
        #expect(table.unheld() == [3, 4, 5])
        table.apply(Self.advert("a", [0, 1, 2, 3, 4, 5], at: 400))
        #expect(table.unheld().isEmpty)
    }

    @Test("the advert's record round-trips; a record that is no advert is refused")
    func advertRecord() {
        let advert = Self.advert("a", [2, 0], at: 5)
        #expect(advert.partitions == [0, 2])
        #expect(InstanceAdvert.decode(advert.encoded()) == advert)
        #expect(InstanceAdvert.decode(Array(#"{"instance":"a"}"#.utf8)) == nil)
        #expect(InstanceAdvert.decode(Array("not json".utf8)) == nil)
    }

    @Test(
        "an advertised address without a port gets the port the server listens on",
        arguments: [
            ("http://10.0.0.5", 8123, "http://10.0.0.5:8123"),
            ("http://10.0.0.5/", 8123, "http://10.0.0.5:8123"),
            ("http://worker-2.geo:9000", 8123, "http://worker-2.geo:9000"),
            ("https://geo.example", 443, "https://geo.example:443"),
        ]
    )
    func advertisedAddress(_ setting: String, _ port: Int, _ expected: String) {
        #expect(GroupPresence.complete(setting, port: port) == expected)
        #expect(GroupPresence.complete("http://10.0.0.5", port: nil) == nil)
    }

    @Test("the group's event stream shows an event sent twice once: by its id, among the latest remembered")
    func seenEventIds() {
        var seen = SeenEventIds(capacity: 3)
        #expect(["a", "b", "a", "c", "b"].map { seen.isNew($0) } == [true, true, false, true, false])
        let d = seen.isNew("d")
        // Past its capacity the oldest id is forgotten.
        let aAgain = seen.isNew("a")
        #expect(d && aAgain)
        let event = Array(#"{"specversion":"1.0","data":{"id":"not this"},"id":"positions:3:17:0"}"#.utf8)
        #expect(event.withUnsafeBytes { GroupEventFeed.eventId(in: $0) } == "positions:3:17:0")
        #expect(Array("[1]".utf8).withUnsafeBytes { GroupEventFeed.eventId(in: $0) } == nil)
    }
}
