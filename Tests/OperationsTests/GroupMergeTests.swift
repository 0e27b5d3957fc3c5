import Foundation
import Testing

@testable import Operations

/// The group's answers merged (``GroupMerge``): the limit applied once, nearest first, each device once, and the
/// instances that did not answer named.
@Suite("merging the group's answers")
struct GroupMergeTests {
    static func nearbyAnswer(_ devices: [(String, Double)]) -> [UInt8] {
        let items = devices.map { #"{"deviceId":"\#($0.0)","distanceMeters":\#($0.1),"status":"current"}"# }
        return Array(
            #"{"center":{"lat":48.5,"lon":7.7},"radiusMeters":5000,"devices":[\#(items.joined(separator: ","))]}"#.utf8
        )
    }

    static func part(_ instance: String, _ partitions: [Int32], _ answer: [UInt8]?) -> GroupMerge.Part {
        GroupMerge.Part(
            instance: instance,
            address: "http://\(instance)",
            partitions: partitions,
            answer: answer,
            problem: answer == nil ? "no answer within 2000 ms" : nil
        )
    }

    static func object(_ bytes: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    @Test("nearest first over every instance, the limit once, a device two instances have from its partition's holder")
    func nearby() throws {
        let merged = GroupMerge.nearby(
            [
                Self.part("a", [0, 1], Self.nearbyAnswer([("d1", 10), ("d4", 400), ("stale", 50)])),
                Self.part("b", [2, 3], Self.nearbyAnswer([("d2", 20), ("stale", 900), ("d3", 300)])),
            ],
            limit: 5,
            moving: []
        ) { instance, deviceId in deviceId == "stale" ? instance == "b" : true }
        let answer = try Self.object(merged)
        let devices = try #require(answer["devices"] as? [[String: Any]])
        #expect(devices.map { $0["deviceId"] as? String } == ["d1", "d2", "d3", "d4", "stale"])
        #expect(devices.last?["distanceMeters"] as? Double == 900)
        #expect(answer["complete"] as? Bool == true)
        #expect((answer["center"] as? [String: Any])?["lat"] as? Double == 48.5)
    }

    @Test("an instance that did not answer, and partitions moving, are named; the rest is answered")
    func partial() throws {
        let merged = GroupMerge.nearby(
            [Self.part("a", [0, 1], Self.nearbyAnswer([("d1", 10)])), Self.part("b", [2], nil)],
            limit: 10,
            moving: [3]
        ) { _, _ in true }
        let answer = try Self.object(merged)
        #expect((answer["devices"] as? [[String: Any]])?.count == 1)
        #expect(answer["complete"] as? Bool == false)
        #expect(answer["movingPartitions"] as? [Int] == [3])
        let instances = try #require(answer["instances"] as? [[String: Any]])
        #expect(instances.map { $0["answered"] as? Bool } == [true, false])
        #expect(instances[1]["error"] as? String == "no answer within 2000 ms")
    }

    @Test("the map: counts summed, devices of every instance sampled evenly down to the limit")
    func map() throws {
        func answer(_ prefix: String, _ count: Int) -> [UInt8] {
            let devices = (0..<count).map { #"{"deviceId":"\#(prefix)\#($0)"}"# }.joined(separator: ",")
            return Array(
                #"{"view":[-180,-90,180,90],"inView":\#(count),"shown":\#(count),"sampled":false,"truncated":false,"devices":[\#(devices)]}"#
                    .utf8
            )
        }
        let merged = GroupMerge.map(
            [Self.part("a", [0], answer("a", 6)), Self.part("b", [1], answer("b", 6))],
            limit: 4,
            moving: []
        )
        let map = try Self.object(merged)
        #expect(map["inView"] as? Double == 12)
        #expect(map["shown"] as? Double == 4)
        #expect(map["sampled"] as? Bool == true)
        let ids = (map["devices"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
        #expect(ids.contains { $0.hasPrefix("a") } && ids.contains { $0.hasPrefix("b") }, "\(ids)")
    }
}
