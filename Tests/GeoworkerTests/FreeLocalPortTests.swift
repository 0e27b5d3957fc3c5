import Foundation
import Testing

@testable import TestSupport

@Suite("Ports for helper programs", .timeLimit(.minutes(5)))
struct FreeLocalPortTests {
    @Test("a helper's port is never one the kernel hands out for port 0, where mock brokers listen and re-listen")
    func belowTheEphemeralRange() throws {
        let ephemeral = ephemeralPortRange()
        for _ in 0..<50 {
            let port = try freeLocalPort()
            #expect(port < ephemeral.lowerBound && port >= 1024, "\(port) within or near \(ephemeral)")
        }
    }
}
