import GeoCore
import JSONCodec
import TestSupport
import Testing

@testable import Worker

/// Which apply thread a message reaches: by its key, else by the device id in its payload, decoded once.
@Suite("Routing messages to apply threads", .timeLimit(.minutes(5)))
struct DeviceRoutingTests {
    let routing = DeviceRouting(shardCount: 3, hashing: IDHashing(seed: 42))

    func route(key: String?, value: String?, kind: InputKind) -> DeviceRouting.Route {
        func withBytes<R>(_ text: String?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
            guard let text else { return body(nil) }
            return Array(text.utf8).withUnsafeBytes { body($0) }
        }
        return withBytes(key) { key in withBytes(value) { value in routing.route(key: key, value: value, kind: kind) } }
    }

    func position(_ device: String) -> String {
        #"{"deviceId":"\#(device)","lat":50.8,"lon":4.3,"timestamp":1795000000000}"#
    }

    @Test("a keyed message goes where its stored device is, without being decoded")
    func byKey() {
        for device in (0..<50).map({ "truck-\($0)" }) {
            let routed = route(key: device, value: "not even JSON", kind: .positions)
            #expect(routed.shard == routing.shard(ofDevice: device))
            #expect(routed.decoded == nil)
        }
    }

    @Test("a keyless message goes by the device id in its payload, and carries its decoding along")
    func keyless() throws {
        for device in (0..<50).map({ "van-\($0)" }) {
            let position = route(key: nil, value: position(device), kind: .positions)
            #expect(position.shard == routing.shard(ofDevice: device))
            #expect(try position.decoded?.get().deviceId == device)

            let command = route(key: "", value: #"{"type":"untrackAll","deviceId":"\#(device)"}"#, kind: .commands)
            #expect(command.shard == routing.shard(ofDevice: device), "an empty key counts as none")
            #expect(try command.decoded?.get() == .command(.untrackAll(deviceId: device)))
        }
    }

    @Test("a keyless message that cannot be read goes to shard 0 with its failure, to be dead-lettered once")
    func unreadable() throws {
        let garbage = route(key: nil, value: "{", kind: .positions)
        #expect(garbage.shard == 0)
        let failure = try #require(garbage.decoded?.failureValue, "the decoding failure travels with the message")
        #expect(failure.reason == .invalidJSON)
        #expect(route(key: nil, value: nil, kind: .commands).shard == 0)
        #expect(route(key: nil, value: "", kind: .commands).decoded == nil)
    }

    @Test("one shard: everything to it, nothing decoded")
    func oneShard() {
        let single = DeviceRouting(shardCount: 1)
        let routed = Array(position("truck-1").utf8).withUnsafeBytes {
            single.route(key: nil, value: $0, kind: .positions)
        }
        #expect(routed.shard == 0 && routed.decoded == nil)
    }

    @Test("devices spread over every shard")
    func spread() {
        var counts = [0, 0, 0]
        for device in 0..<3_000 { counts[routing.shard(ofDevice: "device-\(device)")] += 1 }
        #expect(counts.allSatisfy { $0 > 800 }, "\(counts)")
    }
}
