import Testing

@testable import Worker

/// The worker's life, transition by transition, and what the health probes say in each state.
@Suite("Worker lifecycle and health")
struct WorkerLifecycleTests {
    let failure = WorkerError(.state, "cannot write state")

    func isConsume(_ action: WorkerLifecycle.Action) -> Bool {
        if case .consume = action { return true }
        return false
    }

    func finishes(_ action: WorkerLifecycle.Action) -> Bool? {
        if case .finish(let caughtUp) = action { return caughtUp }
        return nil
    }

    func failsWith(_ action: WorkerLifecycle.Action) -> WorkerError.Code? {
        if case .fail(let error) = action { return error.code }
        return nil
    }

    @Test("start, run, stop on request: the probes follow each phase")
    func ordinaryLife() {
        var life = WorkerLifecycle()
        #expect(life.phase == .starting)
        #expect(isConsume(life.clientsReady()))
        #expect(life.phase == .running && life.isConsuming)
        #expect(finishes(life.stopRequested()) == false)
        #expect(life.phase == .stopping && !life.isConsuming)
        if case .none = life.stopRequested() {} else { Issue.record("a second stop request changes nothing") }
        life.finished()
        #expect(life.phase == .stopped)
    }

    @Test("restoring an assignment: healthy, not ready, running again afterwards; a failure meanwhile is final")
    func restoring() {
        var life = WorkerLifecycle()
        life.restoreStarted()
        #expect(life.phase == .starting, "nothing is restored before the clients are up")
        _ = life.clientsReady()
        life.restoreStarted()
        #expect(life.phase == .restoring && !life.isConsuming)
        let health = WorkerHealth()
        health.enter(life.phase)
        #expect(health.isHealthy && !health.isReady)
        life.restoreFinished()
        #expect(life.phase == .running)

        life.restoreStarted()
        #expect(failsWith(life.failed(WorkerError(.changelog, "undecodable"))) == .changelog)
        life.restoreFinished()
        #expect(life.phase == .failed, "a failed restore does not return to running")
    }

    @Test("a stop asked for while starting is kept: the worker finishes as soon as its clients are up")
    func stopWhileStarting() {
        var life = WorkerLifecycle()
        if case .none = life.stopRequested() {} else { Issue.record("nothing to finish yet") }
        #expect(life.phase == .starting)
        #expect(finishes(life.clientsReady()) == false)
        #expect(life.phase == .stopping)
    }

    @Test("caught up: finishes and says so; a stop request after it changes nothing")
    func caughtUp() {
        var life = WorkerLifecycle()
        _ = life.clientsReady()
        #expect(finishes(life.caughtUp()) == true)
        if case .none = life.stopRequested() {} else { Issue.record("already stopping") }
        life.finished()
        guard case .stopped(caughtUp: true) = life.state else {
            Issue.record("stopped because caught up, got \(life.state)")
            return
        }
    }

    @Test("a failure in any live phase is final, and the first one is the one reported")
    func failures() {
        for setUp in [
            { (_: inout WorkerLifecycle) in },
            { (life: inout WorkerLifecycle) in _ = life.clientsReady() },
            { (life: inout WorkerLifecycle) in
                _ = life.clientsReady()
                _ = life.stopRequested()
            },
        ] {
            var life = WorkerLifecycle()
            setUp(&life)
            #expect(failsWith(life.failed(failure)) == .state)
            #expect(life.phase == .failed)
            #expect(failsWith(life.failed(WorkerError(.kafka, "later"))) == .state, "the first failure wins")
            #expect(failsWith(life.stopRequested()) == nil)
            life.finished()
            #expect(life.phase == .failed, "finishing does not hide a failure")
        }
    }

    @Test("a failure after a clean stop changes nothing")
    func failureAfterStop() {
        var life = WorkerLifecycle()
        _ = life.clientsReady()
        _ = life.stopRequested()
        life.finished()
        if case .none = life.failed(failure) {} else { Issue.record("stopped is final") }
        #expect(life.phase == .stopped)
    }

    @Test(
        "liveness is anything but failed; readiness only while consuming",
        arguments: [
            (WorkerHealth.Phase.starting, true, false), (.running, true, true), (.stopping, true, false),
            (.stopped, true, false), (.failed, false, false),
        ]
    )
    func probes(phase: WorkerHealth.Phase, healthy: Bool, ready: Bool) {
        let health = WorkerHealth()
        health.enter(phase)
        #expect(health.phase == phase)
        #expect(health.isHealthy == healthy)
        #expect(health.isReady == ready)
    }

    func rewinds(_ action: WorkerLifecycle.Action) -> Duration? {
        if case .rewindAndWait(_, _, let delay) = action { return delay }
        return nil
    }

    @Test("a refused delivery rewinds and backs off 1 s, doubling to 60 s, until a checkpoint is written again")
    func backoff() {
        var life = WorkerLifecycle()
        _ = life.clientsReady()
        let refusal = WorkerError(.delivery, "could not deliver 3 records to events")
        let start = ContinuousClock.now
        var delays: [Duration] = []
        for _ in 0..<8 {
            guard let delay = rewinds(life.deliveryRefused(refusal, now: start)) else {
                Issue.record("a refusal rewinds")
                return
            }
            delays.append(delay)
            #expect(life.phase == .backingOff && !life.isConsuming)
            #expect(life.reason?.contains("could not deliver 3 records to events") == true)
            if case .none = life.backoffElapsed(now: start + delay - .milliseconds(1)) {
            } else {
                Issue.record("still backing off just before the delay is over")
            }
            #expect(isConsume(life.backoffElapsed(now: start + delay)))
            #expect(life.phase == .running && life.reason == nil)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })

        life.checkpointWritten()
        #expect(rewinds(life.deliveryRefused(refusal, now: start)) == .seconds(1), "the count starts afresh")
    }

    @Test("a stop while backing off finishes at once; a refusal while stopping ends the stop")
    func stopAndRefusal() {
        var life = WorkerLifecycle(backoff: .init(initial: .milliseconds(200), maximum: .seconds(5)))
        _ = life.clientsReady()
        let refusal = WorkerError(.delivery, "refused")
        #expect(rewinds(life.deliveryRefused(refusal, now: .now)) == .milliseconds(200))
        #expect(finishes(life.stopRequested()) == false)
        if case .none = life.deliveryRefused(refusal, now: .now) {} else { Issue.record("no rewinding while stopping") }
        #expect(life.phase == .stopped)
    }

    @Test("backing off is neither healthy nor ready, and says why")
    func backingOffProbes() {
        let health = WorkerHealth()
        health.enter(.backingOff, reason: "could not deliver to events")
        #expect(!health.isHealthy && !health.isReady)
        #expect(health.reason == "could not deliver to events")
        health.enter(.running)
        #expect(health.isHealthy && health.reason == nil)
    }
}
