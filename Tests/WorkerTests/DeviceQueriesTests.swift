import GeoCore
import Testing

@testable import Worker

@Suite("Device queries (the loop answers the operations endpoints)", .timeLimit(.minutes(5)))
struct DeviceQueriesTests {
    @Test("a question the loop does not take in time is answered busy; one it takes gets its answer")
    func busyOrAnswered() async throws {
        let queries = DeviceQueries(timeout: .milliseconds(100))
        let unanswered = await queries.ask(.statusCard(deviceId: "d", now: 0))
        #expect(unanswered.isBusy, "\(unanswered)")
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
        let answer = await queries.ask(.map(.world, limit: 1))
        let text = try #require(answer.notHeldText, "expected the loop's answer, not \(answer)")
        #expect(text == "elsewhere")
    }
}

extension DeviceQueries.Answer {
    var isBusy: Bool {
        if case .busy = self { return true }
        return false
    }

    var notHeldText: String? {
        if case .notHeld(let text) = self { return text }
        return nil
    }
}
