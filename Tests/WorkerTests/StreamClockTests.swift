import Testing

@testable import Worker

@Suite("A partition pair's stream time, and the wall clock for one that receives nothing")
struct StreamClockTests {
    let start = ContinuousClock.now
    let wall: Int64 = 1_795_000_000_000

    func idle(
        _ clock: inout StreamClock,
        at seconds: Int,
        idle: Set<Int32> = [0, 1],
        idleAfter: Duration = .seconds(60)
    ) -> [StreamClock.Advance] {
        clock.idleAdvances(
            partitions: [0, 1],
            isIdle: { idle.contains($0) },
            now: start + .seconds(seconds),
            wallTime: wall + Int64(seconds) * 1000,
            idleAfter: idleAfter
        )
    }

    @Test("a pair read to its end that released nothing for the bound gets the wall clock, counted as such")
    func idlePairGetsTheWallClock() {
        var clock = StreamClock()
        var advances: [StreamClock.Advance]
        clock.released(upTo: wall - 5_000, partition: 0, at: start)
        advances = idle(&clock, at: 59)
        #expect(advances.isEmpty, "pair 0 released 59 s ago; pair 1 first found idle now")
        advances = idle(&clock, at: 60)
        #expect(advances == [StreamClock.Advance(partition: 0, time: wall + 60_000, byWallClock: true)])
        advances = idle(&clock, at: 118)
        #expect(advances == [StreamClock.Advance(partition: 0, time: wall + 118_000, byWallClock: true)])
        // Pair 1, with nothing released since it started, from when it was first found idle.
        advances = idle(&clock, at: 119)
        #expect(advances.map(\.partition) == [0, 1])
        // Its stream time is the messages' still.
        #expect(clock.time(of: 0) == wall - 5_000)
        #expect(clock.time(of: 1) == nil)
    }

    @Test("a release, a pair still reading, or a restart start the bound again; never behind the pair's own time")
    func whatStartsTheBoundAgain() {
        var clock = StreamClock()
        var advances: [StreamClock.Advance]
        clock.released(upTo: wall, partition: 0, at: start)
        clock.released(upTo: wall + 30_000, partition: 0, at: start + .seconds(30))
        advances = idle(&clock, at: 60, idle: [0])
        #expect(advances.isEmpty, "30 s since its last release")
        advances = idle(&clock, at: 90, idle: [0])
        #expect(advances.map(\.partition) == [0])
        // Not read to its end: its messages will carry the time.
        clock.released(upTo: wall + 100_000, partition: 0, at: start + .seconds(100))
        advances = idle(&clock, at: 200, idle: [])
        #expect(advances.isEmpty)
        advances = idle(&clock, at: 200, idle: [0])
        #expect(advances.map(\.partition) == [0])
        clock.restart(partition: 0)
        advances = idle(&clock, at: 300, idle: [0])
        #expect(advances.isEmpty, "started again: first found idle now")
        advances = idle(&clock, at: 360, idle: [0])
        #expect(advances.map(\.partition) == [0])
        // Messages stamped ahead of the wall clock: the wall clock never takes the pair's time back.
        clock.released(upTo: wall + 10_000_000, partition: 1, at: start + .seconds(360))
        advances = idle(&clock, at: 500, idle: [1])
        #expect(advances.isEmpty)
    }

    @Test("looked at once a second")
    func onceASecond() {
        var clock = StreamClock()
        let looks = [.zero, .milliseconds(999), .seconds(1)].map { clock.isIdleCheckDue(at: start + $0) }
        #expect(looks == [true, false, true])
    }
}
