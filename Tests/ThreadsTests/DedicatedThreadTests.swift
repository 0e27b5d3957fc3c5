import Foundation
import Testing

@testable import Threads

@Suite("Dedicated threads")
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
    #endif
}
