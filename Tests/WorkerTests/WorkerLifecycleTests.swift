import Kafka
import Testing

@testable import Worker

/// The worker's life, transition by transition: each event's action, and what the health probes say in each
/// state.
@Suite("Worker lifecycle and health", .timeLimit(.minutes(5)))
struct WorkerLifecycleTests {
    let failure = WorkerError(.state, "cannot write state")
    let refusal = WorkerError(.delivery, "could not deliver 3 records to events")

    @Test("start, run, stop on request: the probes follow each phase")
    func ordinaryLife() {
        var life = WorkerLifecycle()
        #expect(life.phase == .starting)
        #expect(life.clientsReady() == .consume)
        #expect(life.phase == .running)
        #expect(life.polled(now: .now) == .consume)
        #expect(life.stopRequested() == .finish(caughtUp: false))
        #expect(life.phase == .stopping)
        #expect(life.stopRequested() == .nothing, "a second stop request changes nothing")
        #expect(life.finished() == .exit)
        #expect(life.phase == .stopped)
    }

    @Test("an assignment: restoring (healthy, not ready), then running; a failure meanwhile is final")
    func restoring() {
        var life = WorkerLifecycle()
        #expect(life.assigned() == .ignoreAssignment, "nothing is restored before the clients are up")
        #expect(life.phase == .starting)
        #expect(life.clientsReady() == .consume)
        #expect(life.assigned() == .restore)
        #expect(life.phase == .restoring)
        let health = WorkerHealth()
        health.enter(life.phase)
        #expect(health.isHealthy && !health.isReady)
        #expect(life.restored() == .consume)
        #expect(life.phase == .running)

        #expect(life.assigned() == .restore)
        #expect(life.failed(WorkerError(.changelog, "undecodable")) == .fail(WorkerError(.changelog, "")))
        #expect(life.restored() == .nothing)
        #expect(life.phase == .failed, "a failed restore does not return to running")
        #expect(life.polled(now: .now) == .fail(WorkerError(.changelog, "")), "the loop fails after the poll")
    }

    @Test("a stop asked for while starting is kept: the worker finishes as soon as its clients are up")
    func stopWhileStarting() {
        var life = WorkerLifecycle()
        #expect(life.stopRequested() == .nothing, "nothing to finish yet")
        #expect(life.phase == .starting)
        #expect(life.clientsReady() == .finish(caughtUp: false))
        #expect(life.phase == .stopping)
        #expect(life.assigned() == .ignoreAssignment, "a leaving worker takes no partitions")

        var stoppedMeanwhile = WorkerLifecycle()
        #expect(stoppedMeanwhile.clientsReady(stopRequested: true) == .finish(caughtUp: false))
        #expect(stoppedMeanwhile.phase == .stopping)
    }

    @Test("caught up: finishes and says so; a stop request after it changes nothing")
    func caughtUp() {
        var life = WorkerLifecycle()
        #expect(life.clientsReady() == .consume)
        #expect(life.caughtUp() == .finish(caughtUp: true))
        #expect(life.stopRequested() == .nothing, "already stopping")
        #expect(life.finished() == .exit)
        #expect(life.state == .stopped(caughtUp: true))
        #expect(life.stoppedCaughtUp)
    }

    @Test("a failure in any live phase is final, and the first one is the one reported")
    func failures() {
        for setUp in [
            { (_: inout WorkerLifecycle) in },
            { (life: inout WorkerLifecycle) in #expect(life.clientsReady() == .consume) },
            { (life: inout WorkerLifecycle) in
                #expect(life.clientsReady() == .consume)
                #expect(life.stopRequested() == .finish(caughtUp: false))
            },
        ] {
            var life = WorkerLifecycle()
            setUp(&life)
            #expect(life.failed(failure) == .fail(failure))
            #expect(life.phase == .failed)
            #expect(life.failed(WorkerError(.kafka, "later")) == .fail(failure), "the first failure wins")
            #expect(life.stopRequested() == .nothing)
            #expect(life.finished() == .fail(failure), "finishing does not hide a failure")
            #expect(life.phase == .failed)
        }
    }

    @Test("a failure after a clean stop changes nothing")
    func failureAfterStop() {
        var life = WorkerLifecycle()
        #expect(life.clientsReady() == .consume)
        #expect(life.stopRequested() == .finish(caughtUp: false))
        #expect(life.finished() == .exit)
        #expect(life.failed(failure) == .nothing, "stopped is final")
        #expect(life.phase == .stopped)
    }

    @Test("a checkpoint that fails in the store is final; one whose records were refused rewinds")
    func checkpointFailures() {
        var life = WorkerLifecycle()
        #expect(life.clientsReady() == .consume)
        #expect(life.checkpointFailed(refusal, now: .now) == .rewind(reason: refusal, refusals: 1, delay: .seconds(1)))
        #expect(life.checkpointFailed(failure, now: .now) == .fail(failure))
        #expect(life.phase == .failed)
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

    @Test("a refused delivery rewinds and backs off 1 s, doubling to 60 s, until a checkpoint is written again")
    func backoff() throws {
        var life = WorkerLifecycle()
        #expect(life.clientsReady() == .consume)
        let start = ContinuousClock.now
        var delays: [Duration] = []
        for refusals in 1...8 {
            let action = life.checkpointFailed(refusal, now: start)
            let (reason, count, delay) = try #require(action.rewind, "a refusal rewinds, not \(action)")
            #expect(reason == refusal && count == refusals)
            delays.append(delay)
            #expect(life.phase == .backingOff)
            #expect(life.reason?.contains("could not deliver 3 records to events") == true)
            #expect(
                life.backoffElapsed(now: start + delay - .milliseconds(1)) == .backOff(until: start + delay),
                "still backing off just before the delay is over"
            )
            #expect(life.backoffElapsed(now: start + delay) == .consume)
            #expect(life.phase == .running && life.reason == nil)
        }
        #expect(delays == [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })

        #expect(life.checkpointWritten() == .consume)
        #expect(
            life.checkpointFailed(refusal, now: start) == .rewind(reason: refusal, refusals: 1, delay: .seconds(1)),
            "the count starts afresh"
        )
    }

    @Test("a stop while backing off finishes at once; a refusal while stopping does not rewind")
    func stopAndRefusal() {
        var life = WorkerLifecycle(backoff: .init(initial: .milliseconds(200), maximum: .seconds(5)))
        #expect(life.clientsReady() == .consume)
        #expect(
            life.checkpointFailed(refusal, now: .now)
                == .rewind(reason: refusal, refusals: 1, delay: .milliseconds(200))
        )
        #expect(life.stopRequested() == .finish(caughtUp: false))
        #expect(life.checkpointFailed(refusal, now: .now) == .nothing, "no rewinding while stopping")
        #expect(life.finished() == .exit)
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

    @Test(
        "a catch-up run whose last checkpoint is refused goes back and retries: it ends well only when all is delivered"
    )
    func catchUpRefusal() {
        var life = WorkerLifecycle()
        #expect(life.clientsReady() == .consume)
        #expect(life.caughtUp() == .finish(caughtUp: true))
        #expect(life.checkpointFailed(refusal, now: .now) == .rewind(reason: refusal, refusals: 1, delay: .seconds(1)))
        #expect(life.phase == .backingOff)
        #expect(life.backoffElapsed(now: .now + .seconds(1)) == .consume)
        #expect(life.caughtUp() == .finish(caughtUp: true))
        #expect(life.finished() == .exit)
        #expect(life.stoppedCaughtUp)
    }

    @Test("the retry budget: after maxAttempts refused attempts in a row the worker gives up, unavailable")
    func retryBudget() {
        var life = WorkerLifecycle(
            backoff: .init(initial: .milliseconds(100), maximum: .seconds(1), maxAttempts: 3)
        )
        #expect(life.clientsReady() == .consume)
        let start = ContinuousClock.now
        for attempt in 1...2 {
            #expect(life.checkpointFailed(refusal, now: start) != .fail(refusal), "attempt \(attempt) backs off")
            #expect(life.backoffElapsed(now: start + .seconds(10)) == .consume)
        }
        let gaveUp = life.checkpointFailed(refusal, now: start)
        #expect(gaveUp == .fail(WorkerError(.unavailable, "")))
        #expect(life.failure?.message.contains("3 attempts") == true, "\(life.failure?.message ?? "")")
        #expect(life.failure?.message.contains("could not deliver 3 records to events") == true)

        var forever = WorkerLifecycle(backoff: .init(initial: .milliseconds(100), maximum: .seconds(1)))
        #expect(forever.clientsReady() == .consume)
        for _ in 1...50 { #expect(forever.checkpointFailed(refusal, now: start) != .fail(refusal)) }
        #expect(forever.phase == .backingOff, "no budget: a service never gives up")
    }

    @Test(
        "Kafka unreachable at start-up: not ready, waiting with the back-off; a stop ends the wait; the budget ends it"
    )
    func waitingForKafka() {
        let unreachable = WorkerError(
            .topics,
            "topic positions",
            underlying: KafkaError(code: .transport, message: "Local: Broker transport failure", isRetriable: true)
        )
        var life = WorkerLifecycle(backoff: .init(initial: .seconds(1), maximum: .seconds(4), maxAttempts: 3))
        let start = ContinuousClock.now
        #expect(life.connectFailed(unreachable, now: start) == .backOff(until: start + .seconds(1)))
        #expect(life.phase == .starting)
        #expect(life.reason?.contains("waiting for Kafka") == true)
        #expect(life.backoffElapsed(now: start) == .backOff(until: start + .seconds(1)))
        #expect(life.backoffElapsed(now: start + .seconds(1)) == .connect)
        #expect(life.connectFailed(unreachable, now: start) == .backOff(until: start + .seconds(2)), "doubling")
        #expect(life.connectFailed(unreachable, now: start) == .fail(WorkerError(.unavailable, "")), "3 attempts")

        var stopped = WorkerLifecycle()
        #expect(stopped.connectFailed(unreachable, now: start) == .backOff(until: start + .seconds(1)))
        #expect(stopped.stopRequested() == .exit, "nothing read, nothing to finish")
        #expect(stopped.phase == .stopped)

        var connected = WorkerLifecycle()
        #expect(connected.connectFailed(unreachable, now: start) == .backOff(until: start + .seconds(1)))
        #expect(connected.clientsReady() == .consume, "the next attempt reached Kafka")

        var missingTopic = WorkerLifecycle()
        let missing = WorkerError(
            .topics,
            "topic positions",
            underlying: KafkaError(code: .unknownTopicOrPartition, message: "unknown topic")
        )
        #expect(missingTopic.connectFailed(missing, now: start) == .fail(missing), "not passing: fails at once")
    }

    @Test(
        "partitions lost inside a poll rewind after it at once, outside the retry budget; so does a fenced checkpoint"
    )
    func lostAssignment() {
        let start = ContinuousClock.now
        let lost = WorkerError(.fenced, "lost 4 partitions")
        var life = WorkerLifecycle(backoff: .init(initial: .seconds(1), maximum: .seconds(60), maxAttempts: 1))
        #expect(life.clientsReady() == .consume)
        #expect(life.assignmentLost(lost) == .nothing, "inside the poll: nothing yet")
        #expect(life.polled(now: start) == .rewind(reason: lost, refusals: 0, delay: .zero))
        #expect(life.phase == .backingOff)
        #expect(life.backoffElapsed(now: start) == .consume, "no back-off: nothing was refused")
        #expect(life.polled(now: start) == .consume, "the loss is acted on once")

        // The writer's membership check refused a checkpoint: the same, however often, never giving up.
        for _ in 0..<3 {
            #expect(life.checkpointFailed(lost, now: start) == .rewind(reason: lost, refusals: 0, delay: .zero))
            #expect(life.backoffElapsed(now: start) == .consume)
        }
        let refusal = WorkerError(.delivery, "refused")
        #expect(
            life.checkpointFailed(refusal, now: start) == .fail(WorkerError(.unavailable, "")),
            "a refused delivery still counts towards the budget (of 1 here)"
        )
    }

    @Test("after a rewind, no checkpoint within the stall timeout is another refusal, until the budget gives up")
    func stalledAfterRewind() throws {
        let start = ContinuousClock.now
        let backoff = Self.stallingBackoff(maxAttempts: 3)
        var life = WorkerLifecycle(backoff: backoff)
        #expect(life.clientsReady() == .consume)
        #expect(life.polled(now: start + .seconds(600)) == .consume, "no refusal yet: no clock runs")
        let timedOut = WorkerError(.delivery, "could not deliver 12 records to events: message timed out")
        #expect(
            life.checkpointFailed(timedOut, now: start) == .rewind(reason: timedOut, refusals: 1, delay: .seconds(1))
        )
        #expect(life.backoffElapsed(now: start + .seconds(1)) == .consume)
        #expect(life.polled(now: start + .seconds(30)) == .consume, "29 s since the rewind")
        let second = try #require(life.polled(now: start + .seconds(31)).rewind, "30 s without a checkpoint: a refusal")
        #expect(second.refusals == 2 && second.delay == .seconds(2), "the second refusal in a row")
        #expect(life.backoffElapsed(now: start + .seconds(33)) == .consume)
        #expect(life.polled(now: start + .seconds(63)) == .fail(WorkerError(.unavailable, "")), "the third: gives up")

        var recovered = WorkerLifecycle(backoff: backoff)
        #expect(recovered.clientsReady() == .consume)
        #expect(
            recovered.checkpointFailed(timedOut, now: start)
                == .rewind(reason: timedOut, refusals: 1, delay: .seconds(1))
        )
        #expect(recovered.backoffElapsed(now: start + .seconds(1)) == .consume)
        #expect(recovered.checkpointWritten() == .consume)
        #expect(recovered.polled(now: start + .seconds(600)) == .consume, "a checkpoint written stops the clock")
    }

    @Test(
        "after a loss, the group not taking the instance back within the stall timeout is a refusal; an assignment, even of nothing, ends the wait"
    )
    func notTakenBackAfterLoss() throws {
        let start = ContinuousClock.now
        let backoff = Self.stallingBackoff(maxAttempts: 2)
        let lost = WorkerError(.fenced, "lost 8 partitions")
        // Kafka gone: the session ran out, the partitions were lost, and nobody answers the rejoin.
        var unreachable = WorkerLifecycle(backoff: backoff)
        #expect(unreachable.clientsReady() == .consume)
        #expect(unreachable.assignmentLost(lost) == .nothing)
        #expect(unreachable.polled(now: start) == .rewind(reason: lost, refusals: 0, delay: .zero))
        #expect(
            unreachable.checkpointWritten() == .nothing,
            "the checkpoint in hand at the loss, written during the rewind, shows nothing of the group taking it back"
        )
        #expect(unreachable.backoffElapsed(now: start + .seconds(5)) == .consume, "the rewind took 5 s")
        #expect(unreachable.polled(now: start + .seconds(34)) == .consume, "29 s since it resumed")
        let first = try #require(
            unreachable.polled(now: start + .seconds(35)).rewind,
            "30 s without being taken back into the group is a refusal"
        )
        #expect(first.refusals == 1 && first.delay == .seconds(1), "the first refusal")
        #expect(unreachable.backoffElapsed(now: start + .seconds(36)) == .consume)
        #expect(unreachable.polled(now: start + .seconds(65)) == .consume, "29 s since it resumed again")
        #expect(
            unreachable.polled(now: start + .seconds(66)) == .fail(WorkerError(.unavailable, "")),
            "still not taken back: the budget of 2 is spent"
        )

        // The same after the membership check refused a checkpoint; here the group answers the rejoin.
        var takenBack = WorkerLifecycle(backoff: backoff)
        #expect(takenBack.clientsReady() == .consume)
        #expect(takenBack.checkpointFailed(lost, now: start) == .rewind(reason: lost, refusals: 0, delay: .zero))
        #expect(takenBack.backoffElapsed(now: start) == .consume)
        #expect(takenBack.assigned() == .restore, "assigned nothing: an idle member of a bigger group")
        #expect(takenBack.restored() == .consume)
        #expect(takenBack.polled(now: start + .seconds(600)) == .consume, "back in the group: idle is not stalled")
    }

    /// The default back-off with a retry budget and a stall timeout of 30 s.
    static func stallingBackoff(maxAttempts: Int) -> WorkerLifecycle.Backoff {
        .init(initial: .seconds(1), maximum: .seconds(60), maxAttempts: maxAttempts, stallTimeout: .seconds(30))
    }
}

extension WorkerLifecycle.Action {
    /// A rewind's reason, refusals in a row and back-off; nil for any other action.
    var rewind: (reason: WorkerError, refusals: Int, delay: Duration)? {
        if case .rewind(let reason, let refusals, let delay) = self { return (reason, refusals, delay) }
        return nil
    }
}
