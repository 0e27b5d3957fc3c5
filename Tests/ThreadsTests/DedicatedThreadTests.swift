import Foundation
import Testing

@testable import Threads

@Suite("Dedicated threads", .timeLimit(.minutes(5)))
struct DedicatedThreadTests {
    /// The calling thread's name as the kernel keeps it (what `top -H` and `perf` show).
    static func systemNameOfThisThread() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .newlines)
    }

    #if os(Linux)
    @Test("a thread carries its name where the system's tools see it, cut to the kernel's 15 bytes")
    func systemNames() async {
        let cases = [
            ("gw-apply-1", "gw-apply-1"), ("gw-checkpoints", "gw-checkpoints"),
            ("geoworker", "geoworker"), ("kafka-producer-poll", "kafka-producer-"),
        ]
        for (name, expected) in cases {
            let seen = await DedicatedThread.runOnce(name: name) { Self.systemNameOfThisThread() }
            #expect(seen == expected, "\(name)")
        }
    }

    @Test("a background thread runs behind the process's others (nice 10); a normal one as they do")
    func backgroundPriority() async {
        let process = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(getpid()))
        for (priority, expected) in [(DedicatedThread.Priority.normal, process), (.background, process + 10)] {
            let thread = DedicatedThread(name: "test-priority", priority: priority)
            // With 0, Linux answers for the calling thread alone.
            let seen = await thread.run { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
            thread.stop()
            #expect(seen == expected, "\(priority)")
        }
    }
    #endif

    @Test(
        "a cancelled wait for a blocking call: the call asked to finish returns its result; one that will not is left"
    )
    func cancelledWait() async throws {
        // Asked to finish, the call returns: its result comes back.
        let finishing = DispatchSemaphore(value: 0)
        let answered = Task {
            let call: @Sendable () -> String = {
                finishing.wait()
                return "finished"
            }
            return await DedicatedThread.runOnce(
                name: "test-finishes",
                onCancel: { finishing.signal() },
                abandoningAfter: .seconds(60),
                call
            )
        }
        answered.cancel()
        #expect(await answered.value == "finished")

        // A call that does not listen: the wait ends after the grace, and the call goes on alone until it returns.
        let release = DispatchSemaphore(value: 0)
        let returned = DispatchSemaphore(value: 0)
        let left = Task {
            let call: @Sendable () -> String = {
                release.wait()
                returned.signal()
                return "finished"
            }
            return await DedicatedThread.runOnce(
                name: "test-left",
                onCancel: {},
                abandoningAfter: .milliseconds(50),
                call
            )
        }
        left.cancel()
        #expect(await left.value == nil)
        release.signal()
        returned.wait()

        // Not cancelled: as runOnce.
        let plain = await DedicatedThread.runOnce(name: "test-plain", onCancel: {}, abandoningAfter: .zero, { 42 })
        #expect(plain == 42)
    }
}
