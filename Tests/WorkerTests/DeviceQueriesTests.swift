import GeoCore
import Testing

@testable import Worker

@Suite("Device queries (the loop answers the operations endpoints)")
struct DeviceQueriesTests {
    @Test("a question the loop does not take in time is answered busy; one it takes gets its answer")
    func busyOrAnswered() async {
        let queries = DeviceQueries(timeout: .milliseconds(100))
        guard case .busy = await queries.ask(.statusCard(deviceId: "d", now: 0)) else {
            Issue.record("expected busy")
            return
        }
        #expect(queries.hasPending, "the unanswered question still waits for the loop")
        queries.answerPending { _ in .json([]) }
        #expect(!queries.hasPending)

        let loop = Task {
            while !Task.isCancelled {
                if queries.hasPending { queries.answerPending { _ in .notHeld("elsewhere") } }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        defer { loop.cancel() }
        guard case .notHeld(let text) = await queries.ask(.map(.world, limit: 1)) else {
            Issue.record("expected the loop's answer")
            return
        }
        #expect(text == "elsewhere")
    }
}
